import LLVS

struct InitCommand: Command {
    static let name = "init"
    static let summary = "Create an empty store."
    static let arguments = ""
    static let options: [OptionSpec] = [.value("storage", "KIND", "where versions are kept: file (default)")]

    let storage: String

    init(_ arguments: ParsedArguments) throws {
        storage = arguments.value("storage") ?? "file"
        guard storage == "file" else { throw CommandError.usage("unknown storage kind \(storage); use file") }
    }

    func run(in context: CommandContext) async throws {
        _ = try Store(creatingAt: context.storeURL, descriptor: StoreDescriptor(storage: storage))
        context.writeLine("Created an empty store at \(context.storePath).")
    }
}
