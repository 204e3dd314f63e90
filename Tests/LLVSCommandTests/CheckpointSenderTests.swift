import Foundation
import LLVS
import Testing

@testable import LLVSCommandLine

/// `backup --to` sends each checkpoint while the walk goes on: a committed version reaches the remote without the
/// walk ending (were it sent only at the end, the wait below would never be met and the time limit would fail it),
/// and what was sent early is reported with the versions, each after its predecessors.
@Suite(.timeLimit(.minutes(2))) struct CheckpointSenderTests {
    @Test func aCommittedVersionIsSentBeforeTheWalkEnds() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("llvs-sender-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try Store(rootDirectoryURL: folder.appendingPathComponent("store"))
        let remote = folder.appendingPathComponent("remote")
        let exchange = CloudFileSystemExchange(store: store, fileSystem: LocalFolderFileSystem(root: remote))
        let sender = CheckpointSender(exchange, remote: [])
        let versionFiles = remote.appendingPathComponent("versions").path
        var committed: [Version.ID] = []
        for index in 0..<3 {
            let version = try store.makeVersion(
                basedOnPredecessor: committed.last, inserting: [Value(id: "v\(index)", data: Data("\(index)".utf8))])
            committed.append(version.id)
            sender.committed()
            try FileEvents.wait(
                in: [versionFiles],
                until: { FileManager.default.fileExists(atPath: versionFiles + "/" + version.id.rawValue) },
                while: { !Task.isCancelled })
            #expect(FileManager.default.fileExists(atPath: versionFiles + "/" + version.id.rawValue))
        }
        #expect(await sender.finish() == committed)
    }
}
