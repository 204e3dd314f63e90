import LLVS

struct InitCommand: Command {
    static let name = "init"
    static let summary = "Create an empty store."
    static let arguments = ""
    static let storageOption = Option(
        "storage", "KIND", "where versions are kept: file (one file per version, the default) or sqlite (one database)",
        .oneOf(["file", "sqlite"]))
    static let options: [any DeclaredOption] = [storageOption]

    let storage: String

    init(_ arguments: ParsedArguments) throws {
        storage = arguments[Self.storageOption] ?? "file"
    }

    func run(in context: CommandContext) async throws {
        _ = try Store(
            creatingAt: context.storeURL, descriptor: StoreDescriptor(storage: storage),
            makeStorage: CommandContext.storageMaker)
        context.writeLine("Created an empty store (\(storage) storage) at \(context.storePath).")
    }
}
