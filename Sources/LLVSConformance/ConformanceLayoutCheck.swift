import Foundation
import LLVS
import LLVSSupport

extension ConformanceChecks {
    // MARK: 9. The LLVS layouts

    /// Versions go to the remote and come back whole in both layouts an exchange writes (`RemoteFormatRecord`):
    /// upstream (JSON, what LLVS apps read) and compact (binary, values as stored). Each holds a small value, a
    /// compressible one past the inline limit (so its changes file is streamed from a local file) and an
    /// incompressible one, and a merge; a second store retrieves them all through the connector and reads the same
    /// values. The stores are local and temporary.
    static func layouts(_ c: ConformanceContext) async throws -> CheckOutcome {
        let local = ConformanceLocalFiles.make()
        defer { try? POSIX.removeTree(local.path) }
        let text = Data(String(repeating: "a line of text that compresses well\n", count: 140_000).utf8)
        let noise = bytes(Int(Store.inlineValueLimit) + 1_000, seed: 90)
        for codec in [UpstreamRemoteCodec() as any RemoteCodec, CompactRemoteCodec()] {
            let sender = try Store(rootDirectoryURL: local.appendingPathComponent("\(codec.name)-sender"))
            let root = try sender.makeVersion(
                basedOnPredecessor: nil,
                inserting: [
                    Value(id: "small", data: Data("s".utf8)), Value(id: "text", data: text),
                    Value(id: "noise", data: noise),
                ])
            let left = try sender.makeVersion(
                basedOnPredecessor: root.id, updating: [Value(id: "small", data: Data("left".utf8))])
            let right = try sender.makeVersion(basedOnPredecessor: root.id, removing: ["noise"])
            let merged = try sender.merge(version: left.id, with: right.id)
            let basePath = c.path(codec.name)
            let sent = try await CloudFileSystemExchange(
                store: sender, fileSystem: c.fileSystem, basePath: basePath,
                concurrency: c.options.concurrentTransfers, codec: codec
            ).send()
            try require(sent.failures.isEmpty, "\(codec.name): sending should succeed, got \(sent.failures)")
            let receiver = try Store(rootDirectoryURL: local.appendingPathComponent("\(codec.name)-receiver"))
            let retrieved = try await CloudFileSystemExchange(
                store: receiver, fileSystem: c.fileSystem, basePath: basePath,
                concurrency: c.options.concurrentTransfers, codec: codec
            ).retrieve()
            try require(
                retrieved.failures.isEmpty && retrieved.retrieved.count == 4,
                "\(codec.name): 4 versions should come back, got \(retrieved.retrieved.count) (\(retrieved.failures))")
            for version in [root.id, left.id, right.id, merged.id] {
                try require(
                    try receiver.values(at: version) == sender.values(at: version),
                    "\(codec.name): version \(version) should hold the values sent")
            }
        }
        return .passed
    }
}
