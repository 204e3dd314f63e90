import Foundation
import LLVS
import LLVSBackup
import LLVSRetention

/// `llvs forget`: removes backups by policy, as restic does, per source. It writes one version of marks (one small
/// value per backup forgotten), which syncs like any other, so every device that shares the store's history forgets
/// the same backups; the space they held is freed by `llvs prune`.
struct ForgetCommand: Command {
    static let name = "forget"
    static let summary = "Forget backups by policy (each source on its own); `llvs prune` then frees their space."
    static let arguments = ""
    static let sourceOption = Option(
        "source", "NAME", "only this backed-up directory (its name or path; repeat for several)", .text,
        repeatable: true)
    static let lastOption = Option("keep-last", "N", "keep the N newest backups", .integer(0...Int.max))
    static let hourlyOption = Option(
        "keep-hourly", "N", "keep the newest backup of each of the N last hours that have one", .integer(0...Int.max))
    static let dailyOption = Option("keep-daily", "N", "the same for days", .integer(0...Int.max))
    static let weeklyOption = Option("keep-weekly", "N", "the same for weeks (Monday to Sunday)", .integer(0...Int.max))
    static let monthlyOption = Option("keep-monthly", "N", "the same for months", .integer(0...Int.max))
    static let yearlyOption = Option("keep-yearly", "N", "the same for years", .integer(0...Int.max))
    static let withinOption = Option(
        "keep-within", "DURATION", "keep every backup up to DURATION older than the newest (as 1y2m3d4h)",
        ValueKind(expected: "a duration as 1y2m3d4h (years, months, days, hours)") { KeepDuration($0) })
    static let dryRunOption = CommonOptions.dryRun("say what would be forgotten, and forget nothing")
    static let pruneOption = Flag("prune", "then prune, as `llvs prune` does")
    static let options: [any DeclaredOption] = [
        sourceOption, lastOption, hourlyOption, dailyOption, weeklyOption, monthlyOption, yearlyOption, withinOption,
        dryRunOption, pruneOption, CommonOptions.json, CommonOptions.quiet,
    ]
    static let positionalCount = 0...0
    static let examples = [
        "llvs forget --keep-daily 7 --keep-weekly 4 --keep-monthly 12 --dry-run",
        "llvs forget --keep-last 10 --source ~/Documents --prune",
    ]

    let sources: [String]
    let policy: RetentionPolicy
    let dryRun: Bool
    let prune: Bool
    let json: Bool
    let quiet: Bool

    init(_ arguments: ParsedArguments) throws {
        sources = arguments.all(Self.sourceOption)
        policy = RetentionPolicy(
            last: arguments[Self.lastOption], hourly: arguments[Self.hourlyOption], daily: arguments[Self.dailyOption],
            weekly: arguments[Self.weeklyOption], monthly: arguments[Self.monthlyOption],
            yearly: arguments[Self.yearlyOption], within: arguments[Self.withinOption])
        dryRun = arguments[Self.dryRunOption]
        prune = arguments[Self.pruneOption]
        json = arguments[CommonOptions.json]
        quiet = arguments[CommonOptions.quiet]
        guard !(json && quiet) else { throw CommandError.usage("give --json or --quiet, not both") }
        guard !(json && prune) else {
            throw CommandError.usage("--json prints one answer: give it to forget, or to a prune run after it")
        }
        guard !policy.isEmpty else {
            throw CommandError.usage(
                "give at least one --keep-… rule (forget keeps what a rule selects and the newest backup of each source)"
            )
        }
    }

    struct Shown: Encodable {
        var version: String
        var date: String
        var reasons: [String]
    }

    struct ShownSource: Encodable {
        var name: String
        var keep: [Shown]
        var remove: [Shown]
    }

    struct Result: Encodable {
        var sources: [ShownSource]
        var dryRun: Bool
        /// The version that holds the marks; nil for a dry run or when nothing was forgotten.
        var version: String?
    }

    func run(in context: CommandContext) async throws {
        let context = context.quieted(quiet)
        let started = Date()
        context.log("forget (\(Self.text(policy))): started")
        let coordinator = try context.openCoordinator()
        let store = coordinator.store
        guard let current = await coordinator.currentVersionId else {
            if json {
                try context.writeJSON(Result(sources: [], dryRun: dryRun, version: nil))
            } else {
                context.writeLine("No backups to forget.")
            }
            return
        }
        let catalog = try BackupCatalog(store: store, at: current)
        let wanted = try sources.isEmpty ? nil : Set(sources.map { try catalog.resolvedSource($0) })
        let plan = ForgetPlan(catalog: catalog, policy: policy, sources: wanted)
        var marked: Version?
        if !dryRun, !plan.removed.isEmpty {
            marked = try await coordinator.save(plan.marks())
        }
        let shown = plan.sources.map { source in
            ShownSource(
                name: source.name,
                keep: source.items.filter(\.isKept).map(Self.shown),
                remove: source.items.filter { !$0.isKept }.map(Self.shown))
        }
        if json {
            try context.writeJSON(Result(sources: shown, dryRun: dryRun, version: marked?.id.rawValue))
            return
        }
        guard !shown.isEmpty else { context.writeLine("No backups to forget."); return }
        for source in shown {
            context.writeLine("\(source.name): keep \(source.keep.count), remove \(source.remove.count)")
            let items = (source.keep.map { ("keep  ", $0) } + source.remove.map { ("remove", $0) })
                .sorted { $0.1.date > $1.1.date }
            for (verb, item) in items {
                context.writeLine(
                    "  \(verb)  \(item.date)  \(item.version)"
                        + (item.reasons.isEmpty ? "" : "  " + item.reasons.joined(separator: ", ")))
            }
        }
        let count = plan.removed.count
        let backups = "\(count) backup\(count == 1 ? "" : "s")"
        if dryRun {
            context.writeLine("Would forget \(backups); nothing was changed (--dry-run).")
        } else if let marked {
            context.writeLine(
                "Forgot \(backups) in version \(marked.id)."
                    + (prune ? "" : " Run `llvs prune` to free the space only they used."))
        } else {
            context.writeLine("Nothing to forget.")
        }
        if prune { try await PruneCommand.prune(in: context, dryRun: dryRun, json: false) }
        context.log(
            "forget (\(Self.text(policy))): \(shown.reduce(0) { $0 + $1.keep.count }) kept, \(count) forgotten"
                + (prune ? ", pruned" : "") + String(format: ", %.1f s", Date().timeIntervalSince(started)))
    }

    /// The policy as the rules of its options: `last 3, daily 7, within 1y`.
    static func text(_ policy: RetentionPolicy) -> String {
        let counts: [(String, Int?)] = [
            ("last", policy.last), ("hourly", policy.hourly), ("daily", policy.daily), ("weekly", policy.weekly),
            ("monthly", policy.monthly), ("yearly", policy.yearly),
        ]
        return
            (counts.compactMap { name, count in count.map { "\(name) \($0)" } }
            + (policy.within.map { ["within \($0)"] } ?? [])).joined(separator: ", ")
    }

    static func shown(_ item: ForgetPlan.Item) -> Shown {
        Shown(
            version: item.backup.version.rawValue, date: VersionSummary.format(item.backup.date),
            reasons: item.reasons.map(\.description))
    }

}
