import Foundation
import LLVS
import LLVSConformance

struct ConformanceCommand: Command {
    static let name = "conformance"
    static let summary = "Run the connector conformance suite against a remote, in a fresh folder it removes afterwards."
    static let arguments = "REMOTE"
    static let options: [OptionSpec] = [
        .flag("json", "print JSON"),
        .value("listing-count", "N", "entries in the listing check (default 1050, above one page of every service)"),
        .value("large-file-mib", "N", "size of the large-file check (default 12)"),
    ]
    static let positionalCount = 1...1

    let remote: String
    let json: Bool
    var options = ConformanceOptions()

    init(_ arguments: ParsedArguments) throws {
        remote = arguments.positionals[0]
        json = arguments.has("json")
        if let text = arguments.value("listing-count") {
            guard let n = Int(text), n > 0 else { throw CommandError.usage("--listing-count needs a positive number") }
            options.listingCount = n
        }
        if let text = arguments.value("large-file-mib") {
            guard let n = Int(text), n > 0 else { throw CommandError.usage("--large-file-mib needs a positive number") }
            options.largeFileSize = n << 20
        }
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
