import LLVS

struct LogCommand: Command {
    static let name = "log"
    static let summary = "List versions, newest first; * marks the current version."
    static let arguments = ""
    static let limitOption = Option("limit", "N", "show at most N versions", .integer(0...Int.max))
    static let options: [any DeclaredOption] = [CommonOptions.json, limitOption]

    let json: Bool
    let limit: Int?

    init(_ arguments: ParsedArguments) throws {
        json = arguments[CommonOptions.json]
        limit = arguments[Self.limitOption]
    }

    func run(in context: CommandContext) async throws {
        let coordinator = try context.openCoordinator()
        let current = await coordinator.currentVersionId
        var versions = coordinator.store.history.versions.values.sorted { History.isOrderedBefore($1, $0) }
        if let limit { versions = Array(versions.prefix(limit)) }
        let summaries = versions.map { VersionSummary($0, current: current) }
        if json { try context.writeJSON(summaries) } else { summaries.forEach { context.writeLine($0.line) } }
    }
}
