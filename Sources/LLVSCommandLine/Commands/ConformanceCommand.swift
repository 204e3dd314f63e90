import Foundation
import LLVS
import LLVSConformance

struct ConformanceCommand: Command {
    static let name = "conformance"
    static let summary = "Run the connector conformance suite against a remote, in a fresh folder it removes afterwards."
    static let arguments = "REMOTE"
    static let listingCount = Option("listing-count", "N", "entries in the listing check (default 1050, above one page of every service)", .integer(1...1_000_000))
    static let largeFileMiB = Option("large-file-mib", "N", "size of the large-file check (default 12)", .integer(1...65_536))
    static let options: [any DeclaredOption] = [CommonOptions.json, listingCount, largeFileMiB]
    static let positionalCount = 1...1

    let remote: String
    let json: Bool
    var options = ConformanceOptions()

    init(_ arguments: ParsedArguments) throws {
        remote = arguments.positionals[0]
        json = arguments[CommonOptions.json]
        if let count = arguments[Self.listingCount] { options.listingCount = count }
        if let mebibytes = arguments[Self.largeFileMiB] { options.largeFileSize = mebibytes << 20 }
    }

    func run(in context: CommandContext) async throws {
        let connection = try context.connection(remote)
        var options = self.options
        options.parentFolder = connection.basePath
        let json = self.json
        let report = await ConformanceSuite.run(on: connection.fileSystem, options: options) { result in
            if !json { FileHandle.standardError.write(Data("  \(result.status == .failed ? "✗" : "·") \(result.id)\n".utf8)) }
        }
        if json { try context.writeJSON(report) } else { report.table.split(separator: "\n").forEach { context.writeLine(String($0)) } }
        guard report.allPassed else { throw CommandError.failed("\(report.failed) conformance check(s) failed against \(connection.name).") }
    }
}
