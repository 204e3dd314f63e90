import Foundation
import LLVS
import LLVSConformance
import Synchronization
import Testing

/// Every wrapper of a file system hands every requirement of `CloudFileSystem` to its base, each kind of source and
/// destination as it came: the compiler makes a wrapper write every requirement (none has a default), and this
/// checks that each one reaches the base as the same member, not through another (a region read through memory,
/// a staged file sent as a plain one).
@Suite struct WrapperForwardingTests {
    /// Records which requirement was called, and answers each trivially.
    final class RecordingFileSystem: CloudFileSystem, Sendable {
        let calls = Mutex<[String]>([])
        private func called(_ member: String) { calls.withLock { $0.append(member) } }
        func take() -> [String] {
            calls.withLock {
                let taken = $0; $0 = []; return taken
            }
        }

        var capabilities: CloudCapabilities { called("capabilities"); return .plain }
        func exists(_ path: String) async throws -> Bool { called("exists"); return true }
        func list(_ folder: String) async throws -> [CloudItem] { called("list"); return [] }
        func listNames(_ folder: String) async throws -> [String] { called("listNames"); return [] }
        func metadata(_ path: String) async throws -> CloudItem {
            called("metadata"); return CloudItem(name: "x", isFolder: false)
        }
        func stager(for path: String) async throws -> FileStager { called("stager"); return .plain }
        func upload(_ source: UploadSource, to path: String, mode: UploadMode) async throws {
            switch source {
            case .data: called("upload(data)")
            case .file: called("upload(file)")
            case .staged: called("upload(staged)")
            }
        }
        func read(_ path: String, range: ByteRange?) async throws -> Data {
            called(range == nil ? "read(whole)" : "read(range)"); return Data()
        }
        func download(_ path: String, to destination: DownloadDestination) async throws {
            switch destination {
            case .file: called("download(file)")
            case .region: called("download(region)")
            }
        }
        func makeFolder(_ path: String) async throws { called("makeFolder") }
        func removeFile(_ path: String) async throws { called("removeFile") }
        func removeFolder(_ path: String) async throws { called("removeFolder") }
    }

    struct PlainForwarding: ForwardingFileSystem {
        let base: any CloudFileSystem
    }

    /// Each requirement, called through `wrapper`, with the member the base must see.
    static func callEach(
        _ wrapper: any CloudFileSystem, base: RecordingFileSystem, scratch: URL
    ) async throws -> [(String, [String])] {
        var seen: [(String, [String])] = []
        func check(_ member: String, _ call: () async throws -> Void) async throws {
            _ = base.take()
            try await call()
            seen.append((member, base.take().filter { $0 != "capabilities" }))
        }
        let file = scratch.appendingPathComponent("file")
        try Data("x".utf8).write(to: file)
        try await check("exists") { _ = try await wrapper.exists("a") }
        try await check("list") { _ = try await wrapper.list("a") }
        try await check("listNames") { _ = try await wrapper.listNames("a") }
        try await check("metadata") { _ = try await wrapper.metadata("a") }
        try await check("stager") { _ = try await wrapper.stager(for: "a") }
        try await check("upload(data)") { try await wrapper.upload(.data(Data("x".utf8)), to: "a", mode: .replace) }
        try await check("upload(file)") {
            try await wrapper.upload(try UploadSource(file: file), to: "a", mode: .newName)
        }
        try await check("upload(staged)") {
            try await wrapper.upload(try UploadSource(staged: file), to: "a", mode: .replace)
        }
        try await check("read(whole)") { _ = try await wrapper.read("a", range: nil) }
        try await check("read(range)") { _ = try await wrapper.read("a", range: .bytes(0, 0)) }
        try await check("download(file)") {
            try await wrapper.download("a", to: .file(scratch.appendingPathComponent("out")))
        }
        try await check("download(region)") { try await wrapper.download("a", to: .region(file, offset: 0, length: 1)) }
        try await check("makeFolder") { try await wrapper.makeFolder("a") }
        try await check("removeFile") { try await wrapper.removeFile("a") }
        try await check("removeFolder") { try await wrapper.removeFolder("a") }
        return seen
    }

    @Test(arguments: [
        "RetryingFileSystem", "ForwardingFileSystem", "FaultInjectingFileSystem", "MisreportingFileSystem",
    ])
    func everyRequirementReachesTheBase(wrapper name: String) async throws {
        let scratch = TemporaryDirectory()
        let base = RecordingFileSystem()
        let wrapper: any CloudFileSystem =
            switch name {
            case "RetryingFileSystem": RetryingFileSystem(base)
            case "ForwardingFileSystem": PlainForwarding(base: base)
            case "FaultInjectingFileSystem": FaultInjectingFileSystem(base)
            default: MisreportingFileSystem(base, lie: .checksums)
            }
        for (member, calls) in try await Self.callEach(wrapper, base: base, scratch: scratch.url) {
            #expect(calls == [member], "\(name).\(member) reached the base as \(calls)")
        }
        _ = wrapper.capabilities
        #expect(base.take() == ["capabilities"], "\(name).capabilities")
    }
}
