import Foundation
import LLVSSupport
#if canImport(Glibc)
import Glibc
#endif

/// An `llvs-mock` process started for a test, with the lines it printed on starting (its URL first).
final class MockProcess {
    let process = ChildProcess()
    let lines: [String]

    /// Starts `llvs-mock ARGUMENTS` and waits for `lineCount` lines of output; `environment` is added to the test's.
    init(_ arguments: [String], lineCount: Int = 1, environment: [String: String] = [:]) throws {
        process.executableURL = CommandLineTests.binary.deletingLastPathComponent().appendingPathComponent("llvs-mock")
        process.arguments = arguments
        if !environment.isEmpty { process.environment = CommandLineTests.cleanEnvironment.merging(environment) { $1 } }
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

    /// Stops the mock as a user does (SIGTERM: it closes its sockets and removes its storage), or with SIGKILL
    /// when it has not ended within 10 seconds.
    deinit {
        kill(process.processIdentifier, SIGTERM)
        let deadline = Date().addingTimeInterval(10)
        while process.isRunning, Date() < deadline { usleep(10_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }
}
