import Foundation
import LLVSSupport
import Testing

/// A prune on one store of two that share a remote: the other's unsent versions and a backup it makes meanwhile,
/// from a version that still names what the prune collected, are never lost.
extension BackupCommandTests {
    @Test func aPruneOnOneOfTwoStoresSharingARemoteLosesNothingOfTheOther() async throws {
        let a = path("a"), b = path("b")
        for store in [a, b] { #expect(try await llvs("init", "--store", store).status == 0) }
        #expect(try await llvs("remote", "add", "--all-stores", "home", "file://" + path("remote")).status == 0)
        for round in 0..<3 {
            try write(path("src-a/changing.bin"), SeededGenerator.bytes(1 << 20, seed: UInt64(round)))
            let backup = try await llvs("backup", path("src-a"), "--name", "a-docs", "--store", a, "--to", "home")
            #expect(backup.status == 0, "\(backup.error)")
        }
        #expect(try await llvs("sync", "home", "--store", b).status == 0)
        try write(path("src-b/own.bin"), SeededGenerator.bytes(400_000, seed: 50))
        #expect(try await llvs("backup", path("src-b"), "--name", "b-docs", "--store", b, "--to", "home").status == 0)
        // B goes offline with five versions it has not sent.
        for index in 0..<5 {
            let put = try await llvs(
                "put", "note-\(index)", "-", "--store", b, input: SeededGenerator.bytes(5000, seed: UInt64(60 + index)))
            #expect(put.status == 0, "\(put.error)")
        }

        // A forgets all but each source's newest backup; the store shares a remote, so its prune only collects.
        #expect(try await llvs("sync", "home", "--store", a).status == 0)
        #expect(try await llvs("forget", "--keep-last", "1", "--store", a).status == 0)
        let collect = try await llvs("prune", "--store", a)
        #expect(collect.status == 0 && collect.text.contains("Collected"), "\(collect.text) \(collect.error)")

        // Meanwhile B backs up a file whose bytes are A's first changing.bin, collected on A. B's version still holds
        // that chunk, so its backup names it without writing it.
        try write(path("src-b/like-a.bin"), SeededGenerator.bytes(1 << 20, seed: 0))
        #expect(try await llvs("backup", path("src-b"), "--name", "b-docs", "--store", b).status == 0)
        let waiting = try await llvs("prune", "--store", a)
        #expect(waiting.status == 0 && waiting.text.contains("waiting:"), "\(waiting.text)")
        #expect(!waiting.text.contains("Freed"), "\(waiting.text)")

        // B comes back; A learns of B's backup, which still restores there, whole.
        #expect(try await llvs("sync", "home", "--store", b).status == 0)
        #expect(try await llvs("sync", "home", "--store", a).status == 0)
        let stillWaiting = try await llvs("prune", "--store", a)
        #expect(stillWaiting.text.contains("b-docs has no backup made since"), "\(stillWaiting.text)")
        #expect(try await llvs("restore", path("b-on-a"), "--source", "b-docs", "--store", a).status == 0)
        #expect(try snapshot(of: path("b-on-a")) == snapshot(of: path("src-b")))

        // Each source backs up again after seeing the collection (B's file unchanged: its entry is taken as it was,
        // naming the chunk A's current version no longer holds); then A's prune releases.
        #expect(try await llvs("sync", "home", "--store", b).status == 0)
        #expect(try await llvs("backup", path("src-b"), "--name", "b-docs", "--store", b, "--to", "home").status == 0)
        #expect(try await llvs("backup", path("src-a"), "--name", "a-docs", "--store", a, "--to", "home").status == 0)
        #expect(try await llvs("sync", "home", "--store", a).status == 0)
        let release = try await llvs("prune", "--store", a, "--json")
        #expect(release.status == 0, "\(release.error)")
        let report = try #require(try JSONSerialization.jsonObject(with: release.output) as? [String: Any])
        // A's second changing.bin goes; its first stays, named by B's backups (the collected record revived).
        #expect((report["releasedBytes"] as? Int64 ?? 0) > 1_000_000, "\(release.text)")
        #expect((report["revived"] as? Int ?? 0) >= 1, "\(release.text)")
        #expect((report["waiting"] as? [String])?.isEmpty == true, "\(release.text)")

        // Nothing of B's is lost on A, nor of A's; both stores check whole and converge.
        for (source, folder) in [("b-docs", "src-b"), ("a-docs", "src-a")] {
            let out = path("final-\(source)")
            let restore = try await llvs("restore", out, "--source", source, "--store", a)
            #expect(restore.status == 0, "\(restore.error)")
            #expect(try snapshot(of: out) == snapshot(of: path(folder)))
        }
        for index in 0..<5 {
            let got = try await llvs("get", "note-\(index)", "--store", a)
            #expect(got.output == SeededGenerator.bytes(5000, seed: UInt64(60 + index)))
        }
        for store in [a, b] {
            #expect(try await llvs("sync", "home", "--store", store).status == 0)
            let check = try await llvs("check", "--read-data", "--store", store)
            #expect(check.status == 0, "\(store): \(check.text) \(check.error)")
        }
        #expect(try await llvs("sync", "home", "--store", a).status == 0)
        let heads = try await [a, b].asyncMap { try await self.llvs("heads", "--store", $0).text }
        #expect(heads[0] == heads[1], "\(heads)")
    }
}

extension Array {
    fileprivate func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var result: [T] = []
        for element in self { result.append(try await transform(element)) }
        return result
    }
}
