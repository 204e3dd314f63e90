import Foundation
import Testing
@testable import LLVS

/// The exchange's logic does not depend on the bytes of the remote's files: with another codec, stores converge
/// through a remote whose files the upstream codec cannot read.
@Suite struct RemoteCodecTests {
    let directory = TemporaryDirectory()

    /// The upstream encoding with every byte inverted: a format of its own, as unreadable to the upstream codec as a
    /// compact one would be.
    struct InvertingCodec: RemoteCodec {
        let upstream = UpstreamRemoteCodec()
        var name: String { "inverted" }
        static func invert(_ data: Data) -> Data { Data(data.map { ~$0 }) }

        func encodeVersion(_ version: Version) throws -> Data { Self.invert(try upstream.encodeVersion(version)) }
        func decodeVersion(_ data: Data, path: String) throws -> Version {
            try upstream.decodeVersion(Self.invert(data), path: path)
        }
        func encodeChanges(
            madeInVersionIdentifiedBy id: Version.ID, in store: Store, stager: FileStager?
        ) throws -> EncodedChanges {
            let encoded = try store.encodedChanges(madeInVersionIdentifiedBy: id)
            defer { encoded.discard() }
            return .data(Self.invert(try encoded.data()))
        }
        func decodeChanges(_ encoded: EncodedChanges, path: String, temporaryDirectory: URL) throws -> ReceivedChanges {
            try upstream.decodeChanges(
                .data(Self.invert(try encoded.data())), path: path, temporaryDirectory: temporaryDirectory)
        }
    }

    func exchange(_ store: Store, _ remote: LocalFolderFileSystem, codec: any RemoteCodec) -> CloudFileSystemExchange {
        CloudFileSystemExchange(store: store, fileSystem: remote, basePath: "sync", concurrency: 4, codec: codec)
    }

    @Test func storesConvergeThroughARemoteInAnotherFormat() async throws {
        let remote = LocalFolderFileSystem(root: directory.child("remote"))
        let a = try makeStore(in: directory, name: "a"), b = try makeStore(in: directory, name: "b")
        let base = try a.makeVersion(basedOnPredecessor: nil, inserting: [Value(id: "shared", data: Data("base".utf8))])
        _ = try a.makeVersion(
            basedOnPredecessor: base.id, inserting: [Value(id: "large", data: Data(repeating: 7, count: 300_000))])
        #expect(try await exchange(a, remote, codec: InvertingCodec()).send().sent.count == 2)
        let received = try await exchange(b, remote, codec: InvertingCodec()).retrieve()
        #expect(received.retrieved.count == 2 && received.failures.isEmpty)
        #expect(b.heads == a.heads)
        #expect(try b.value(id: "large", at: b.heads.first!)?.data == Data(repeating: 7, count: 300_000))

        // The files are the codec's, not the upstream layout: the upstream codec refuses them, naming each file.
        let versionFile = try await remote.download("sync/versions/\(base.id.rawValue)")
        #expect(versionFile.first != UInt8(ascii: "{"))
        let c = try makeStore(in: directory, name: "c")
        let upstream = try await exchange(c, remote, codec: UpstreamRemoteCodec()).retrieve()
        #expect(upstream.retrieved.isEmpty && upstream.failures.count == 2)
        #expect(
            upstream.failures.allSatisfy {
                if case ExchangeError.malformedFile(let path, _) = $0.error {
                    path.contains("versions/")
                } else {
                    false
                }
            })
    }
}
