import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// An `llvs-mock` process started for a test, with the lines it printed on starting (its URL first).
final class MockProcess {
    let process = Process()
    let lines: [String]

    /// Starts `llvs-mock ARGUMENTS` and waits for `lineCount` lines of output.
    init(_ arguments: [String], lineCount: Int = 1) throws {
        process.executableURL = CommandLineTests.binary.deletingLastPathComponent().appendingPathComponent("llvs-mock")
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        var text = ""
        let handle = output.fileHandleForReading
        while text.split(separator: "\n").count < lineCount {
            let data = handle.availableData
            if data.isEmpty { break }
            text += String(decoding: data, as: UTF8.self)
        }
        lines = text.split(separator: "\n").map(String.init)
    }

    var url: String { lines.first ?? "" }

    /// `key=value` pairs printed on the later lines (the OAuth client of a service mock).
    var fields: [String: String] {
        var result: [String: String] = [:]
        for line in lines.dropFirst() {
            for pair in line.split(separator: " ") {
                let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
                if parts.count == 2 { result[parts[0]] = parts[1] }
            }
        }
        return result
    }

    deinit {
        kill(process.processIdentifier, SIGKILL) // Foundation's children may have SIGTERM blocked
        process.waitUntilExit()
    }
}
