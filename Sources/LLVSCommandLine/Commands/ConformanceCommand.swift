import Foundation
import LLVS
import LLVSCloudService
import LLVSConformance
import LLVSHTTP

struct ConformanceCommand: Command {
    static let name = "conformance"
    static let summary =
        "Run the connector conformance suite against a remote, in a fresh folder it removes afterwards."
    static let arguments = "URL|REMOTE"
    static let listingCount = Option(
        "listing-count", "N", "entries in the listing check (default 1050, above one page of every service)",
        .integer(1...1_000_000))
    static let largeFileMiB = Option(
        "large-file-mib", "N", "size of the large-file check (default 12)", .integer(1...65_536))
    static let faults = Flag(
        "faults",
        "also run the failure checks (429, 503, a dropped connection, an expired and a revoked token), injected between the connector and the network"
    )
    static let accountOption = Option(
        "account", "NAME",
        "with a URL: the account to sign in with (default: the kind's own, as gdrive, where the kind needs one)",
        .nonEmpty)
    static let options: [any DeclaredOption] = [CommonOptions.json, listingCount, largeFileMiB, faults, accountOption]
    static let positionalCount = 1...1

    let remote: String
    let json: Bool
    let injectsFaults: Bool
    let account: String?
    var options = ConformanceOptions()

    init(_ arguments: ParsedArguments) throws {
        remote = arguments.positionals[0]
        json = arguments[CommonOptions.json]
        injectsFaults = arguments[Self.faults]
        account = arguments[Self.accountOption]
        if account != nil, !URLRemote.isURL(remote) {
            throw CommandError.usage("--account goes with a URL; \(remote) names a remote, which has its own")
        }
        if let count = arguments[Self.listingCount] { options.listingCount = count }
        if let mebibytes = arguments[Self.largeFileMiB] { options.largeFileSize = mebibytes << 20 }
    }

    func run(in context: CommandContext) async throws {
        let injector = injectsFaults ? HTTPFaultInjector() : nil
        // A URL is tested as it is, without adding it as a remote first; it is kept nowhere.
        let connection =
            URLRemote.isURL(remote)
            ? try RemoteConnection(
                name: remote, entry: try URLRemote.entry(remote, account: account, context: context), level: .store,
                context: context, faults: injector)
            : try context.connection(remote, faults: injector)
        var options = self.options
        options.parentFolder = connection.basePath
        var fileSystem = connection.fileSystem
        if let injector {
            if !connection.kind.usesHTTP {
                // Faults go under the retry policy, as the HTTP layer's go under the client's retries: the suite sees
                // what a caller sees.
                let faulty = FaultInjectingFileSystem(fileSystem)
                (fileSystem, options.faults) = (RetryingFileSystem(faulty), faulty)
            } else {
                options.faults = HTTPFaultControl(
                    injector: injector, renewsCredentials: connection.kind.oauth?.refreshesTokens == true)
            }
        }
        let json = self.json
        let report = await ConformanceSuite.run(on: fileSystem, options: options) { result in
            if !json {
                FileHandle.standardError.write(Data("  \(result.status == .failed ? "✗" : "·") \(result.id)\n".utf8))
            }
        }
        if json {
            try context.writeJSON(report)
        } else {
            report.table.split(separator: "\n").forEach { context.writeLine(String($0)) }
        }
        guard report.allPassed else {
            throw CommandError.failed("\(report.failed) conformance check(s) failed against \(connection.name).")
        }
    }
}
