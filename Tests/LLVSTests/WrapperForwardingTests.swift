import Foundation
import LLVS
import LLVSConformance
import Synchronization
import Testing

/// Every wrapper of a file system hands every requirement of `CloudFileSystem` to its base, those with a default
/// too: a default left to run in the wrapper answers in the base's place (a listing of names by a full listing, a
/// region downloaded through memory, a staged file copied), so the base's own way is bypassed unseen.
@Suite struct WrapperForwardingTests {
    /// Records which requirement was called, and answers each trivially.
    final class RecordingFileSystem: CloudFileSystem, Sendable {
        let calls = Mutex<[String]>([])
        private func called(_ member: String) { calls.withLock { $0.append(member) } }
        func take() -> [String] { calls.withLock { let taken = $0; $0 = []; return taken } }

        var capabilities: CloudCapabilities { called("capabilities"); return .plain }
        func exists(_ path: String) async throws -> Bool { called("exists"); return true }
        func list(_ folder: String) async throws -> [CloudItem] { called("list"); return [] }
        func metadata(_ path: String) async throws -> CloudItem { called("metadata"); return CloudItem(name: "x", isFolder: false) }
        func upload(_ data: Data, to path: String) async throws { called("upload(data)") }
        func upload(fileAt source: URL, to path: String) async throws { called("upload(fileAt)") }
        func stager(for path: String) async throws -> FileStager { called("stager"); return .plain }
        func upload(stagedFileAt source: URL, to path: String) async throws {
            called("upload(stagedFileAt)")
            try? FileManager.default.removeItem(at: source)
        }
        func download(_ path: String) async throws -> Data { called("download"); return Data() }
        func download(_ path: String, toFileAt destination: URL) async throws { called("download(toFileAt)") }
        func download(_ path: String, into destination: URL, at offset: Int64, length: Int64) async throws { called("download(into)") }
        func read(_ path: String, range: ByteRange) async throws -> Data { called("read"); return Data() }
        func makeFolder(_ path: String) async throws { called("makeFolder") }
        func removeFile(_ path: String) async throws { called("removeFile") }
        func removeFolder(_ path: String) async throws { called("removeFolder") }
        func listNames(_ folder: String) async throws -> [String] { called("listNames"); return [] }
    }

    struct PlainForwarding: ForwardingFileSystem {
        let base: any CloudFileSystem
    }

    /// Each requirement, called through `wrapper`, with the member the base must see.
    static func callEach(_ wrapper: any CloudFileSystem, base: RecordingFileSystem, scratch: URL) async throws -> [(String, [String])] {
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
        try await check("metadata") { _ = try await wrapper.metadata("a") }
        try await check("upload(data)") { try await wrapper.upload(Data("x".utf8), to: "a") }
        try await check("upload(fileAt)") { try await wrapper.upload(fileAt: file, to: "a") }
        try await check("stager") { _ = try await wrapper.stager(for: "a") }
        try await check("upload(stagedFileAt)") {
            let staged = scratch.appendingPathComponent("staged-\(UUID().uuidString)")
            try Data("x".utf8).write(to: staged)
            try await wrapper.upload(stagedFileAt: staged, to: "a")
        }
        try await check("download") { _ = try await wrapper.download("a") }
        try await check("download(toFileAt)") { try await wrapper.download("a", toFileAt: scratch.appendingPathComponent("out")) }
        try await check("download(into)") { try await wrapper.download("a", into: file, at: 0, length: 1) }
        try await check("read") { _ = try await wrapper.read("a", range: .bytes(0, 0)) }
        try await check("makeFolder") { try await wrapper.makeFolder("a") }
        try await check("removeFile") { try await wrapper.removeFile("a") }
        try await check("removeFolder") { try await wrapper.removeFolder("a") }
        try await check("listNames") { _ = try await wrapper.listNames("a") }
        return seen
    }

    @Test(arguments: ["RetryingFileSystem", "ForwardingFileSystem", "FaultInjectingFileSystem", "MisreportingFileSystem"])
    func everyRequirementReachesTheBase(wrapper name: String) async throws {
        let scratch = TemporaryDirectory()
        let base = RecordingFileSystem()
        let wrapper: any CloudFileSystem = switch name {
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
