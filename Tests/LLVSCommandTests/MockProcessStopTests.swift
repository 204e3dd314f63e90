import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `llvs-mock` stopped as a user stops it (Ctrl-C, `kill`): it exits at once and takes its temporary storage (every
/// file uploaded to it) with it, as its usage says. It used to exit from the signal handler and leave the folder.
@Suite struct MockProcessStopTests {
    @Test(arguments: [("webdav", SIGTERM), ("gdrive", SIGINT), ("box", SIGTERM)])
    func aStoppedMockRemovesItsStorage(service: String, signal: Int32) async throws {
        let temporary = FileManager.default.temporaryDirectory.appendingPathComponent(
            "llvs-mock-stop-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: temporary, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: temporary) }
        let mock = try MockProcess([service], environment: ["TMPDIR": temporary.path])
        #expect(mock.url.hasPrefix("http://127.0.0.1:"))
        let storage = try FileManager.default.contentsOfDirectory(atPath: temporary.path).filter {
            $0.hasPrefix("llvs-mock-\(service)-")
        }
        #expect(storage.count == 1, "the mock keeps its files in TMPDIR: \(storage)")
        // Something stored there, as after an upload.
        if let folder = storage.first {
            try Data("uploaded".utf8).write(
                to: temporary.appendingPathComponent(folder).appendingPathComponent("a-file"))
        }

        kill(mock.process.processIdentifier, signal)
        let deadline = Date().addingTimeInterval(10)
        while mock.process.isRunning, Date() < deadline { try await Task.sleep(for: .milliseconds(10)) }
        #expect(!mock.process.isRunning, "the mock did not stop within 10 s of the signal")
        mock.process.waitUntilExit()
        #expect(mock.process.terminationReason == .exit && mock.process.terminationStatus == 0)
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: temporary.path).isEmpty,
            "the mock left its storage behind")
    }
}
