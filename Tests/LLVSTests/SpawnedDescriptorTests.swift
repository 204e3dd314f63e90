import Foundation
import LLVSMocks
import LLVSSupport
import Testing

/// A child holds only its three standard streams: a copy of a pipe another thread had open when it started would
/// keep that pipe's reader waiting for an end of file until the child ends (a server outlives many tests).
@Suite struct SpawnedDescriptorTests {
    /// The descriptors a running child has open, and where each points.
    static func openDescriptors(of pid: pid_t) throws -> [String: String] {
        let folder = "/proc/\(pid)/fd"
        var links: [String: String] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: folder) {
            links[name] = try FileManager.default.destinationOfSymbolicLink(atPath: folder + "/" + name)
        }
        return links
    }

    @Test func aChildProcessInheritsNoOtherDescriptorAndNullDeviceIsDevNull() throws {
        let unrelated = Pipe()  // open without close-on-exec, as Foundation opens every pipe
        let input = Pipe()
        let child = ChildProcess()
        child.executableURL = URL(fileURLWithPath: "/bin/cat")
        child.standardInput = input
        child.standardOutput = FileHandle.nullDevice
        child.standardError = FileHandle.nullDevice
        try child.run()
        // posix_spawn returns once the child has run its file actions and exec'd.
        let descriptors = try Self.openDescriptors(of: child.processIdentifier)
        try input.fileHandleForWriting.close()
        child.waitUntilExit()
        #expect(descriptors.keys.sorted() == ["0", "1", "2"], "\(descriptors)")
        #expect(descriptors["1"] == "/dev/null" && descriptors["2"] == "/dev/null", "\(descriptors)")
        try unrelated.fileHandleForWriting.close()
        #expect(unrelated.fileHandleForReading.readDataToEndOfFile().isEmpty)
    }

    @Test func aSpawnedServerInheritsNoOtherDescriptor() throws {
        let unrelated = Pipe()  // open while the server starts
        let server = try withExtendedLifetime(unrelated) { try SpawnedProcess(["/bin/sleep", "600"]) }
        defer { server.stop() }
        let descriptors = try Self.openDescriptors(of: server.pid)
        #expect(descriptors.keys.sorted() == ["0", "1", "2"], "\(descriptors)")
    }
}
