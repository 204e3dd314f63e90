import Foundation
import LLVS

/// The checks every `CloudFileSystem` must pass (docs/conformance.md), as a library so that
/// `swift test` runs them against each connector and `llvs conformance` against any remote.
public enum ConformanceSuite {
    /// The checks that need faults injected (`ConformanceOptions.faults`); a run without them skips these, saying so.
    public static let checksNeedingFaults: Set<String> = [
        "rate-limit", "dropped-connection", "answer-lost", "interrupted-upload", "expired-token",
        "revoked-token",
    ]

    /// Runs every check inside a fresh, randomly named folder, removes the folder, and reports each check.
    public static func run(
        on fileSystem: any CloudFileSystem, options: ConformanceOptions = ConformanceOptions(),
        progress: (@Sendable (ConformanceResult) -> Void)? = nil
    ) async -> ConformanceReport {
        ConformanceLocalFiles.removeAbandoned()
        let root = CloudPath.join(options.parentFolder, "llvs-conformance-\(UUID().uuidString.prefix(8).lowercased())")
        var results: [ConformanceResult] = []
        for check in ConformanceChecks.all {
            let context = ConformanceContext(
                fileSystem: fileSystem, folder: CloudPath.join(root, check.id), options: options)
            let start = DispatchTime.now().uptimeNanoseconds
            var result: ConformanceResult
            do {
                if let reason = options.excluded[check.id] { throw ConformanceSkip(reason) }
                switch try await check.run(context) {
                case .passed: result = ConformanceResult(check: check, status: .passed, message: nil)
                case .skipped(let reason): result = ConformanceResult(check: check, status: .skipped, message: reason)
                }
            } catch let skip as ConformanceSkip {
                result = ConformanceResult(check: check, status: .skipped, message: skip.reason)
            } catch {
                result = ConformanceResult(check: check, status: .failed, message: "\(error)")
            }
            result.seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            progress?(result)
            results.append(result)
        }
        results.append(await cleanUp(root, on: fileSystem))
        progress?(results[results.count - 1])
        return ConformanceReport(results: results)
    }

    /// Check 9: the suite leaves nothing behind.
    static func cleanUp(_ root: String, on fileSystem: any CloudFileSystem) async -> ConformanceResult {
        let check = ConformanceCheck(id: "clean-up", section: 9, title: "the suite leaves nothing behind") { _ in
            .passed
        }
        do {
            try await fileSystem.removeFolder(root)
            if try await fileSystem.exists(root) {
                return ConformanceResult(
                    check: check, status: .failed, message: "\(root) is still there after removing it")
            }
            return ConformanceResult(check: check, status: .passed, message: nil)
        } catch {
            return ConformanceResult(check: check, status: .failed, message: "\(error)")
        }
    }
}

/// Settings of a run; the defaults suit a real service.
public struct ConformanceOptions: Sendable {
    /// Where the run's folder is made ("" for the file system's root).
    public var parentFolder = ""
    /// A file size above the service's simple-upload limit, so the chunked or resumable path runs.
    public var largeFileSize = 12 * 1024 * 1024
    /// More entries than one page of the service's listing.
    public var listingCount = 1_050
    /// Transfers at once in the concurrency check.
    public var concurrentTransfers = 24
    /// Lets the failure checks inject faults; without it they are skipped.
    public var faults: (any FaultControl)?
    /// Checks not run, by ID, each with why (a server known to fail it for reasons of its own): reported skipped.
    public var excluded: [String: String] = [:]

    public init() {}
}

/// What one check is given: the file system and a folder of its own that does not exist yet.
public struct ConformanceContext: Sendable {
    public var fileSystem: any CloudFileSystem
    public var folder: String
    public var options: ConformanceOptions

    public func path(_ name: String) -> String { CloudPath.join(folder, name) }
}

public enum CheckOutcome: Sendable {
    case passed
    case skipped(String)
}

/// One check: its section of conformance.md, a title, and the code.
public struct ConformanceCheck: Sendable {
    public var id: String
    public var section: Int
    public var title: String
    public var run: @Sendable (ConformanceContext) async throws -> CheckOutcome
}

/// A check that cannot run against this remote (it needs a fault the run cannot inject), with the reason.
struct ConformanceSkip: Error {
    var reason: String
    init(_ reason: String) { self.reason = reason }
}

/// A check that did not hold, saying what was expected and what happened.
public struct ConformanceFailure: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

public struct ConformanceResult: Codable, Sendable {
    public enum Status: String, Codable, Sendable { case passed, failed, skipped }
    public var id: String
    public var section: Int
    public var title: String
    public var status: Status
    public var message: String?
    public var seconds: Double = 0

    init(check: ConformanceCheck, status: Status, message: String?) {
        id = check.id
        section = check.section
        title = check.title
        self.status = status
        self.message = message
    }
}

public struct ConformanceReport: Codable, Sendable {
    public var results: [ConformanceResult]

    public var passed: Int { results.filter { $0.status == .passed }.count }
    public var failed: Int { results.filter { $0.status == .failed }.count }
    public var skipped: Int { results.filter { $0.status == .skipped }.count }
    public var allPassed: Bool { failed == 0 }

    /// A table for people: one line per check, then the totals.
    public var table: String {
        var lines = ["  #  check                                  result   time   note"]
        for result in results {
            let mark =
                switch result.status {
                case .passed: "passed";
                case .failed: "FAILED";
                case .skipped: "skipped"
                }
            lines.append(
                "  \(result.section)  " + result.id.padding(toLength: 38, withPad: " ", startingAt: 0) + " "
                    + mark.padding(toLength: 8, withPad: " ", startingAt: 0)
                    + String(format: "%5.2fs", result.seconds) + "  " + (result.message ?? ""))
        }
        lines.append("\(passed) passed, \(failed) failed, \(skipped) skipped")
        return lines.joined(separator: "\n")
    }
}
