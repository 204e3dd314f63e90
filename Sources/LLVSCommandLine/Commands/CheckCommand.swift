import Foundation
import LLVS
import LLVSRetention

/// `llvs check`: whether the store holds everything its history and its backups need, and (with data reading)
/// whether the bytes it holds are the ones it wrote. The exit status is 0 only when nothing is wrong.
struct CheckCommand: Command {
    static let name = "check"
    static let summary =
        "Check the store: every version's map, every kept backup's listings and chunks, and with --read-data the data itself."
    static let arguments = ""
    static let readDataOption = Flag("read-data", "read every stored value and check it against its checksum and hash")
    static let subsetOption = Option(
        "read-data-subset", "N/M", "read part N of M of the stored values (chosen by the hash of their IDs)",
        ValueKind(expected: "N/M, two whole numbers with 1 ≤ N ≤ M") { RepositoryCheck.DataReading(subset: $0) })
    static let remoteOption = Option(
        "remote", "REMOTE",
        "check this remote instead, read where it is (version files, changes files; no clone, nothing stored)", .text)
    static let options: [any DeclaredOption] = [readDataOption, subsetOption, remoteOption, CommonOptions.json]
    static let positionalCount = 0...0
    static let examples = ["llvs check", "llvs check --read-data-subset 1/10", "llvs check --remote home --read-data"]

    let reading: RepositoryCheck.DataReading
    let remote: String?
    let json: Bool

    init(_ arguments: ParsedArguments) throws {
        let subset = arguments[Self.subsetOption]
        guard !(arguments[Self.readDataOption] && subset != nil) else {
            throw CommandError.usage("give --read-data or --read-data-subset, not both")
        }
        reading = subset ?? (arguments[Self.readDataOption] ? .all : .none)
        remote = arguments[Self.remoteOption]
        json = arguments[CommonOptions.json]
    }

    func run(in context: CommandContext) async throws {
        if let remote { return try await checkRemote(remote, in: context) }
        let coordinator = try context.openCoordinator()
        guard let current = await coordinator.currentVersionId else {
            if json {
                try context.writeJSON(RepositoryCheck.Report())
            } else {
                context.writeLine("The store is empty: nothing to check.")
            }
            return
        }
        let report = try RepositoryCheck(store: coordinator.store, at: current, reading: reading).run()
        if json {
            try context.writeJSON(report)
        } else {
            context.writeLine(
                "Checked \(report.versions) versions, \(report.backups) backups (\(report.forgottenBackups) forgotten, "
                    + "not checked), \(report.listings) listings, \(report.chunks) chunks.")
            if reading != .none {
                context.writeLine(
                    "Read \(report.valuesRead) values, \(ProgressLine.size(report.bytesRead)) of "
                        + "\(ProgressLine.size(report.bytesStored)) stored.")
            }
            for problem in report.problems {
                context.writeLine("problem: \(problem.object): \(problem.reason)")
                for backup in problem.backups {
                    context.writeLine(
                        "  damages the backup of \(backup.source) of \(VersionSummary.format(backup.date)) "
                            + "(version \(backup.version)):")
                    for path in backup.paths { context.writeLine("    \(path)") }
                    if backup.pathCount > backup.paths.count {
                        context.writeLine("    and \(backup.pathCount - backup.paths.count) more")
                    }
                }
            }
        }
        guard report.problems.isEmpty else {
            let count = report.problems.count
            throw CommandError.failed("check found \(count) problem\(count == 1 ? "" : "s") (listed above).")
        }
        if !json { context.writeLine("No problems found.") }
    }

    func checkRemote(_ name: String, in context: CommandContext) async throws {
        let coordinator = try context.openCoordinator()
        let connection = try context.connection(name)
        let exchange = try await connection.exchange(for: coordinator.store, writing: false)
        let report = try await RemoteCheck(exchange: exchange, reading: reading).run()
        if json {
            try context.writeJSON(report)
        } else {
            context.writeLine(
                "Checked \(report.versions) versions on \(connection.name) (\(report.format) layout)"
                    + (reading == .none
                        ? "."
                        : "; read \(report.changesRead) changes files, \(ProgressLine.size(report.bytesRead)) of values.")
            )
            for problem in report.problems {
                context.writeLine("problem: version \(problem.version): \(problem.reason)")
            }
        }
        guard report.problems.isEmpty else {
            let count = report.problems.count
            throw CommandError.failed("check found \(count) problem\(count == 1 ? "" : "s") on \(connection.name).")
        }
        if !json { context.writeLine("No problems found.") }
    }
}
