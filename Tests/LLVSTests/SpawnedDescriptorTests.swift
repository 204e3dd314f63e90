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
            // One closed since the listing (the listing's own, another thread's) is not open any more.
            links[name] = try? FileManager.default.destinationOfSymbolicLink(atPath: folder + "/" + name)
        }
        return links
    }

    /// The descriptors of `child` beyond its three streams that point where one of this process's does: what it
    /// inherited. What the child opens itself as it starts (`cat` reads its locale's files) is not among them, and
    /// is not asked about: when it is looked at is up to the scheduler.
    static func inherited(by child: pid_t) throws -> [String: String] {
        let ours = Set(try openDescriptors(of: getpid()).values)
        return try openDescriptors(of: child).filter { !["0", "1", "2"].contains($0.key) && ours.contains($0.value) }
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
        let inherited = try Self.inherited(by: child.processIdentifier)
        try input.fileHandleForWriting.close()
        child.waitUntilExit()
        #expect(inherited.isEmpty && ["0", "1", "2"].allSatisfy { descriptors[$0] != nil }, "\(descriptors)")
        #expect(descriptors["1"] == "/dev/null" && descriptors["2"] == "/dev/null", "\(descriptors)")
        try unrelated.fileHandleForWriting.close()
        #expect(unrelated.fileHandleForReading.readDataToEndOfFile().isEmpty)
    }

    @Test func aSpawnedServerInheritsNoOtherDescriptor() throws {
        let unrelated = Pipe()  // open while the server starts
        let server = try withExtendedLifetime(unrelated) { try SpawnedProcess(["/bin/sleep", "600"]) }
        defer { server.stop() }
        let descriptors = try Self.openDescriptors(of: server.pid)
        let inherited = try Self.inherited(by: server.pid)
        #expect(inherited.isEmpty && ["0", "1", "2"].allSatisfy { descriptors[$0] != nil }, "\(descriptors)")
    }
}
