import LLVS

struct InitCommand: Command {
    static let name = "init"
    static let summary = "Create an empty store."
    static let arguments = ""
    static let options: [OptionSpec] = [.value("storage", "KIND", "where versions are kept: file (one file per version, the default) or sqlite (one database)")]

    let storage: String

    init(_ arguments: ParsedArguments) throws {
        storage = arguments.value("storage") ?? "file"
        guard ["file", "sqlite"].contains(storage) else { throw CommandError.usage("unknown storage kind \(storage); use file or sqlite") }
    }

    func run(in context: CommandContext) async throws {
        _ = try Store(creatingAt: context.storeURL, descriptor: StoreDescriptor(storage: storage), makeStorage: CommandContext.storageMaker)
        context.writeLine("Created an empty store (\(storage) storage) at \(context.storePath).")
    }
}
