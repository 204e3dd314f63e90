import Foundation

extension ChildProcess {
    /// Runs a short program to its end: its status and standard output (standard error is dropped); nil when it
    /// cannot be started. For version strings and tools' answers, not for output that may be large.
    public static func output(of executable: URL, _ arguments: [String]) -> (status: Int32, output: String)? {
        let process = ChildProcess()
        process.executableURL = executable
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = nil
        do { try process.run() } catch { return nil }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}
