import LLVS

struct RemoveCommand: Command {
    static let name = "rm"
    static let summary = "Remove value ID in a new version on top of the current one."
    static let arguments = "ID"
    static let options: [OptionSpec] = [.value("branch", "NAME", "save the version on a named branch")]
    static let positionalCount = 1...1

    let id: Value.ID
    let branch: Branch?

    init(_ arguments: ParsedArguments) throws {
        id = Value.ID(arguments.positionals[0])
        branch = arguments.value("branch").map { Branch($0) }
    }

    func run(in context: CommandContext) async throws {
        let coordinator = try context.openCoordinator()
        guard try await coordinator.value(id: id) != nil else {
            throw CommandError.notFound("There is no value \(id) at the current version.")
        }
        let version = try await coordinator.save([.remove(id)], branch: branch)
        context.writeLine(version.id.rawValue)
    }
}
