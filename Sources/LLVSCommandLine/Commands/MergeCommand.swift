import LLVS

struct MergeCommand: Command {
    static let name = "merge"
    static let summary =
        "Merge the other heads into the current version (three-way through an arbiter) and make the result current."
    static let arguments = ""
    static let onlyBranch = Option(
        "branch", "NAME", "merge only heads on this branch (repeatable)", .nonEmpty, repeatable: true)
    static let exceptBranch = Option(
        "except-branch", "NAME", "merge every head except those on this branch (repeatable)", .nonEmpty,
        repeatable: true)
    static let options: [any DeclaredOption] = [ArbiterOption.arbiter, onlyBranch, exceptBranch]

    let arbiter: TellingArbiter
    let selection: HeadSelection

    init(_ arguments: ParsedArguments) throws {
        arbiter = try ArbiterOption.parse(arguments)
        let only = arguments.all(Self.onlyBranch), except = arguments.all(Self.exceptBranch)
        guard only.isEmpty || except.isEmpty else {
            throw CommandError.usage("give --branch or --except-branch, not both")
        }
        selection =
            !only.isEmpty
            ? .branches(only.map { Branch($0) })
            : !except.isEmpty ? .allExcept(branches: except.map { Branch($0) }) : .all
    }

    func run(in context: CommandContext) async throws {
        let coordinator = try context.openCoordinator()
        let before = await coordinator.currentVersionId
        guard let merged = try await coordinator.mergeHeads(selection: selection, resolvingWith: arbiter) else {
            context.writeLine("The store is empty; nothing to merge.")
            return
        }
        for line in arbiter.lines(arbiter.takeDecisions()) { context.writeLine(line) }
        if merged.id == before {
            context.writeLine("Already up to date at \(merged.id).")
        } else if merged.isMerge {
            context.writeLine("Merged into \(merged.id).")
        } else {
            context.writeLine("Fast-forwarded to \(merged.id).")
        }
    }
}
