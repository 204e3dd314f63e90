import LLVS

struct HeadsCommand: Command {
    static let name = "heads"
    static let summary = "List the versions nothing has been saved on top of (branch tips), newest first."
    static let arguments = ""
    static let options: [any DeclaredOption] = [CommonOptions.json]

    let json: Bool

    init(_ arguments: ParsedArguments) throws { json = arguments[CommonOptions.json] }

    func run(in context: CommandContext) async throws {
        let coordinator = try context.openCoordinator()
        let current = await coordinator.currentVersionId
        let store = coordinator.store
        let heads = store.heads.compactMap(store.version(identifiedBy:)).sorted { History.isOrderedBefore($1, $0) }
        let summaries = heads.map { VersionSummary($0, current: current) }
        if json { try context.writeJSON(summaries) } else { summaries.forEach { context.writeLine($0.line) } }
    }
}
