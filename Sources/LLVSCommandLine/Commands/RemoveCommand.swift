import LLVS

struct RemoveCommand: Command {
    static let name = "rm"
    static let summary = "Remove value ID in a new version on top of the current one."
    static let arguments = "ID"
    static let options = Saving.options
    static let positionalCount = 1...1

    let id: Value.ID
    let branch: String?
    let base: String?

    init(_ arguments: ParsedArguments) throws {
        id = Value.ID(arguments.positionals[0])
        branch = arguments[Saving.branch]
        base = arguments[Saving.base]
    }

    func run(in context: CommandContext) async throws {
        let coordinator = try context.openCoordinator()
        guard try await Saving.existing(id, on: base, in: context, coordinator: coordinator) != nil else {
            throw CommandError.notFound(
                "There is no value \(id) at \(base.map { "version \($0)" } ?? "the current version").")
        }
        let version = try await Saving.save(
            .remove(id), branch: branch, on: base, in: context, coordinator: coordinator)
        context.writeLine(version.id.rawValue)
    }
}
