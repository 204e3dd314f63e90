import Foundation
import LLVS
import LLVSRetention

/// `llvs prune`: frees the space of what no kept backup needs (`Prune`: two steps when the store shares its history
/// through remotes, one when it does not).
struct PruneCommand: Command {
    static let name = "prune"
    static let summary = "Free the space of chunks and listings no kept backup needs (after `llvs forget`)."
    static let arguments = ""
    static let dryRunOption = CommonOptions.dryRun("say what would be collected and released, and change nothing")
    static let beforeOption = Option(
        "before", "DATE",
        "also free the values only versions saved before DATE hold (an app store's old history; every head and every "
            + "version from DATE on keep all their values)", .moment)
    static let remoteOption = Option(
        "remote", "REMOTE",
        "also free on this remote what the prune released here (its changes files written again; repeat for several)",
        .text, repeatable: true)
    static let allRemotesOption = Flag("all-remotes", "the same on every remote of the store")
    static let options: [any DeclaredOption] = [
        dryRunOption, beforeOption, remoteOption, allRemotesOption, CommonOptions.json,
    ]
    static let positionalCount = 0...0
    static let examples = [
        "llvs prune --dry-run", "llvs prune --all-remotes", "llvs prune --before 2026-01-01T00:00:00Z",
    ]

    let dryRun: Bool
    let before: Date?
    let remotes: [String]
    let allRemotes: Bool
    let json: Bool

    init(_ arguments: ParsedArguments) throws {
        dryRun = arguments[Self.dryRunOption]
        before = arguments[Self.beforeOption]
        remotes = arguments.all(Self.remoteOption)
        allRemotes = arguments[Self.allRemotesOption]
        json = arguments[CommonOptions.json]
        guard remotes.isEmpty || !allRemotes else {
            throw CommandError.usage("give --remote or --all-remotes, not both")
        }
    }

    func run(in context: CommandContext) async throws {
        let chosen = allRemotes ? try context.remotes().visible().keys.sorted() : remotes
        try await Self.prune(in: context, dryRun: dryRun, before: before, remotes: chosen, json: json)
    }

    struct Result: Encodable {
        var store: Prune.Report
        var remotes: [RemotePrune.Report]
    }

    /// The prune `llvs prune` and `llvs forget --prune` run.
    static func prune(
        in context: CommandContext, dryRun: Bool, before: Date? = nil, remotes pruned: [String] = [], json: Bool
    ) async throws {
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
        var remoteReports: [RemotePrune.Report] = []
        for name in pruned {
            let connection = try context.connection(name)
            let exchange = try await connection.exchange(for: coordinator.store, writing: false)
            guard exchange.codec.name == RemoteFormatRecord.compact else {
                throw CommandError.usage(
                    "\(name) is an upstream remote (as LLVS apps read it), which cannot say a value was released; "
                        + "only a compact remote is pruned")
            }
            remoteReports.append(try await RemotePrune(exchange: exchange, name: name).run(dryRun: dryRun))
        }
        if json {
            try context.writeJSON(
                pruned.isEmpty ? AnyEncodable(report) : AnyEncodable(Result(store: report, remotes: remoteReports)))
            return
        }
        let verb = dryRun ? "Would free" : "Freed"
        if report.released > 0 || dryRun {
            context.writeLine(
                "\(verb) \(ProgressLine.size(report.releasedBytes)) (\(report.released) records nothing kept needs).")
        }
        if let compaction = report.compaction, compaction.versions > 0 {
            context.writeLine(
                "Compacted \(compaction.versions) versions' records: \(ProgressLine.size(compaction.bytesBefore)) "
                    + "on disk before, \(ProgressLine.size(compaction.bytesAfter)) now.")
        }
        if let failure = report.compactionFailure {
            TerminalText.warn("the store's files were not compacted (the next prune tries again): \(failure)")
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
        for remote in remoteReports {
            context.writeLine(
                "\(remote.remote): \(dryRun ? "would write" : "wrote") \(remote.rewritten) changes files again without the "
                    + "released values' bytes"
                    + (remote.leftAsTheyAre > 0
                        ? "; \(remote.leftAsTheyAre) more hold released bytes under a tenth of their size and stay as they are."
                        : "."))
            for failure in remote.failed { context.writeLine("  not written: \(failure)") }
        }
        if remoteReports.contains(where: { !$0.failed.isEmpty }) {
            throw CommandError.failed("some changes files were not written again (listed above); run the prune again.")
        }
    }

    /// An answer of either shape, for `--json`.
    struct AnyEncodable: Encodable {
        let encode: (any Encoder) throws -> Void
        init(_ value: some Encodable) { encode = value.encode(to:) }
        func encode(to encoder: any Encoder) throws { try encode(encoder) }
    }
}
