import Foundation
import LLVS
import LLVSRetention

/// `llvs prune`: frees the space of what no kept backup needs (`Prune`: two steps when the store shares its history
/// through remotes, one when it does not).
struct PruneCommand: Command {
    static let name = "prune"
    static let summary = "Free the space of chunks and listings no kept backup needs (after `llvs forget`)."
    static let arguments = ""
    static let dryRunOption = Flag("dry-run", "say what would be collected and released, and change nothing")
    static let beforeOption = Option(
        "before", "DATE",
        "also free the values only versions saved before DATE hold (an app store's old history; every head and every "
            + "version from DATE on keep all their values)", .isoDate)
    static let options: [any DeclaredOption] = [dryRunOption, beforeOption, CommonOptions.json]
    static let positionalCount = 0...0

    let dryRun: Bool
    let before: Date?
    let json: Bool

    init(_ arguments: ParsedArguments) throws {
        dryRun = arguments[Self.dryRunOption]
        before = arguments[Self.beforeOption]
        json = arguments[CommonOptions.json]
    }

    func run(in context: CommandContext) async throws {
        try await Self.prune(in: context, dryRun: dryRun, before: before, json: json)
    }

    /// The prune `llvs prune` and `llvs forget --prune` run.
    static func prune(in context: CommandContext, dryRun: Bool, before: Date? = nil, json: Bool) async throws {
        let coordinator = try context.openCoordinator()
        let remotes = try context.remotes().visible().keys.sorted()
        var options = Prune.Options()
        options.dryRun = dryRun
        options.exclusive = remotes.isEmpty
        options.before = before
        if let stage = ProcessInfo.processInfo.environment["LLVS_TEST_KILL_PRUNE_AT"] {
            // For the tests of a prune killed part way: the process ends at that stage as a kill -9 would.
            options.onStage = { if $0 == stage { kill(getpid(), SIGKILL) } }
        }
        let report = try await Prune(coordinator: coordinator, options: options).run { versions in
            var reasons: [String] = []
            for remote in remotes {
                do {
                    let connection = try context.connection(remote)
                    let there = try await connection.exchange(for: coordinator.store, writing: false).remoteListing()
                        .versionIds
                    let lacking = versions.filter { !there.contains($0) }.count
                    if lacking > 0 {
                        reasons.append(
                            "\(lacking) version\(lacking == 1 ? " is" : "s are") not yet on the remote \(remote): "
                                + "run `llvs sync \(remote)`")
                    }
                } catch {
                    reasons.append("the remote \(remote) could not be asked what it holds (\(error))")
                }
            }
            return reasons
        }
        if json { try context.writeJSON(report); return }
        let verb = dryRun ? "Would free" : "Freed"
        if report.released > 0 || dryRun {
            context.writeLine(
                "\(verb) \(ProgressLine.size(report.releasedBytes)) (\(report.released) records nothing kept needs).")
        }
        if report.revived > 0 {
            context.writeLine("\(report.revived) collected records are needed again by newer backups and stay.")
        }
        if report.collected > 0 || report.removedObjects > 0 {
            context.writeLine(
                (dryRun ? "Would collect " : "Collected ")
                    + "\(report.collected) records (\(ProgressLine.size(report.collectedBytes))) "
                    + (before == nil ? "no kept backup needs" : "nothing kept needs")
                    + (report.collectionVersion.map { " in version \($0)" } ?? "")
                    + (options.exclusive || dryRun
                        ? "." : "; the next prune frees them, once other devices have seen it."))
        }
        for reason in report.waiting { context.writeLine("waiting: \(reason)") }
        if report.released == 0 && report.collected == 0 && report.removedObjects == 0 && report.waiting.isEmpty {
            context.writeLine("Nothing to prune: every stored record is needed.")
        }
        context.writeLine("What is kept needs \(ProgressLine.size(report.keptBytes)) of stored data.")
    }
}
