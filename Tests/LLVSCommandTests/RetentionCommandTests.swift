import Foundation
import LLVSSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `llvs forget`, `prune` and `check` end to end.
extension BackupCommandTests {
    /// The blocks the store's files take on disk (a prune frees blocks inside files whose sizes stay).
    func diskBytes(_ store: String) throws -> Int64 {
        var total: Int64 = 0
        let walk = FileManager.default.enumerator(atPath: store)!
        while let relative = walk.nextObject() as? String {
            var info = stat()
            if lstat(store + "/" + relative, &info) == 0, info.st_mode & S_IFMT == S_IFREG {
                total += Int64(info.st_blocks) * 512
            }
        }
        return total
    }

    /// Six backups of `src` in `store`; each replaces `changing.bin` (1 MiB, incompressible) and adds a file of its
    /// own. Returns each backup's version and the tree it backed up.
    func sixBackups(store: String, name: String = "docs") async throws -> [(version: String, tree: [String: String])] {
        #expect(try await llvs("init", "--store", store).status == 0)
        var backups: [(String, [String: String])] = []
        for round in 0..<6 {
            try write(path("src/changing.bin"), SeededGenerator.bytes(1 << 20, seed: UInt64(100 + round)))
            try write(path("src/added-\(round).bin"), SeededGenerator.bytes(300_000, seed: UInt64(200 + round)))
            let backup = try await llvs("backup", path("src"), "--name", name, "--store", store)
            #expect(backup.status == 0, "\(backup.error)")
            let log = try await llvs("log", "--store", store, "--limit", "1", "--json")
            let version = try #require(
                (try JSONSerialization.jsonObject(with: log.output) as? [[String: Any]])?.first?["id"] as? String)
            backups.append((version, try snapshot(of: path("src"))))
        }
        return backups
    }

    @Test func forgetAndPruneFreeWhatOnlyForgottenBackupsUsedAndKeptOnesRestoreIdentical() async throws {
        let store = path("store")
        let backups = try await sixBackups(store: store)
        let before = try diskBytes(store)
        let forget = try await llvs("forget", "--keep-last", "2", "--prune", "--store", store)
        #expect(forget.status == 0, "\(forget.error)")
        #expect(forget.text.contains("keep 2, remove 4"), "\(forget.text)")
        // Four versions of changing.bin (4 MiB) were used by forgotten backups only.
        let freed = before - (try diskBytes(store))
        #expect(freed > 3_800_000, "freed \(freed) of \(before): \(forget.text)")
        // What is kept was moved into one compacted pack: no version file is left.
        #expect(forget.text.contains("Compacted 8 versions' records"), "\(forget.text)")
        let versionFiles = try FileManager.default.subpathsOfDirectory(atPath: store + "/versions").filter {
            $0.count > 3
        }
        #expect(versionFiles.isEmpty, "\(versionFiles)")

        for (index, backup) in backups.enumerated() {
            let out = path("out-\(index)")
            let restore = try await llvs("restore", out, "--at", backup.version, "--store", store)
            if index >= 4 {
                #expect(restore.status == 0, "\(restore.error)")
                #expect(try snapshot(of: out) == backup.tree)
            } else {
                #expect(restore.status == 3 && restore.error.contains("forgotten"), "\(restore.error)")
            }
        }
        let check = try await llvs("check", "--read-data", "--store", store)
        #expect(check.status == 0, "\(check.text) \(check.error)")

        // Pushed to a remote after the prune, the released values go as released (their sizes, no bytes): a store
        // cloned from it restores the kept backups and checks whole, and refuses the forgotten ones as the first does.
        #expect(try await llvs("remote", "add", "later", "file://" + path("remote"), "--store", store).status == 0)
        let push = try await llvs("push", "later", "--store", store)
        #expect(push.status == 0, "\(push.error)")
        let clone = try await llvs("clone", "file://" + path("remote"), path("clone"))
        #expect(clone.status == 0, "\(clone.error)")
        for backup in backups.suffix(2) {
            let out = path("out-clone-\(backup.version)")
            #expect(try await llvs("restore", out, "--at", backup.version, "--store", path("clone")).status == 0)
            #expect(try snapshot(of: out) == backup.tree)
        }
        let cloneCheck = try await llvs("check", "--read-data", "--store", path("clone"))
        #expect(cloneCheck.status == 0, "\(cloneCheck.text) \(cloneCheck.error)")
        let upstream = try await llvs(
            "remote", "add", "app", "file://" + path("upstream"), "--format", "upstream", "--store", store)
        #expect(upstream.status == 0, "\(upstream.error)")
        let refused = try await llvs("push", "app", "--store", store)
        #expect(refused.status != 0 && refused.error.contains("released"), "\(refused.error)")

        // A store that was pruned keeps taking backups: content that comes back is written again.
        try write(path("src/changing.bin"), SeededGenerator.bytes(1 << 20, seed: 100))
        #expect(try await llvs("backup", path("src"), "--name", "docs", "--store", store).status == 0)
        #expect(try await llvs("restore", path("again"), "--store", store).status == 0)
        #expect(try snapshot(of: path("again")) == snapshot(of: path("src")))
        #expect(try await llvs("check", "--read-data", "--store", store).status == 0)
    }

    @Test func aPruneKilledAtEachStageLeavesACheckableStoreAndARerunFinishes() async throws {
        for stage in ["collected", "saved", "listed", "released", "compacted"] {
            let store = path("store-\(stage)")
            let backups = try await sixBackups(store: store)
            #expect(try await llvs("forget", "--keep-last", "2", "--store", store).status == 0)
            let killed = try await tests.run(
                ["prune", "--store", store], environment: ["LLVS_TEST_KILL_PRUNE_AT": stage])
            #expect(killed.status != 0, "stage \(stage): the prune was not stopped there")
            let check = try await llvs("check", "--read-data", "--store", store)
            #expect(check.status == 0, "after a kill at \(stage): \(check.text) \(check.error)")
            let rerun = try await llvs("prune", "--store", store)
            #expect(rerun.status == 0, "\(rerun.error)")
            #expect(try await llvs("check", "--read-data", "--store", store).status == 0)
            for backup in backups.suffix(2) {
                let out = path("out-\(stage)-\(backup.version)")
                #expect(try await llvs("restore", out, "--at", backup.version, "--store", store).status == 0)
                #expect(try snapshot(of: out) == backup.tree, "stage \(stage)")
            }
            let again = try await llvs("prune", "--store", store, "--json")
            let report = try JSONSerialization.jsonObject(with: again.output) as? [String: Any]
            #expect(report?["collected"] as? Int == 0, "stage \(stage): \(again.text)")
            try FileManager.default.removeItem(atPath: path("src"))
        }
    }

    /// The stages above are where the prune's state on disk changes. Here it is killed at 20 points drawn at random
    /// (the seed is in every failure message) among the file events an uninterrupted prune of the same store makes
    /// (inotify: files made, written, renamed into place): it is killed once it has made that many. Whatever it had
    /// done, `check` passes, a rerun finishes and the kept backups restore identical.
    @Test func aPruneKilledAtTwentyRandomPointsLeavesACheckableStoreAndARerunFinishes() async throws {
        let seed = UInt64.random(in: 1...UInt64.max)
        var generator = SeededGenerator(seed: seed)
        let template = path("template")
        let backups = try await sixBackups(store: template)
        #expect(try await llvs("forget", "--keep-last", "2", "--store", template).status == 0)
        try FileManager.default.copyItem(atPath: template, toPath: path("whole"))
        let whole = try pruneWatched(path("whole"))
        try whole.watch.wait(forEvents: .max, while: { whole.prune.isRunning })
        #expect(await whole.prune.ended() == 0)
        try whole.watch.next()  // what it made just before it ended
        let events = whole.watch.count
        #expect(events > 3, "an uninterrupted prune made \(events) file events")
        for round in 0..<20 {
            let store = path("store-\(round)")
            try FileManager.default.copyItem(atPath: template, toPath: store)
            let point = Int.random(in: 1...max(1, events), using: &generator)
            let (watch, prune) = try pruneWatched(store)
            try watch.wait(forEvents: point, while: { prune.isRunning })
            kill(prune.processIdentifier, SIGKILL)
            _ = await prune.ended()
            let check = try await llvs("check", "--read-data", "--store", store)
            #expect(check.status == 0, "seed \(seed), round \(round), event \(point): \(check.text) \(check.error)")
            let rerun = try await llvs("prune", "--store", store)
            #expect(rerun.status == 0, "seed \(seed), round \(round): \(rerun.error)")
            #expect(
                try await llvs("check", "--read-data", "--store", store).status == 0, "seed \(seed), round \(round)")
            let backup = backups[4 + round % 2]
            let out = path("out-\(round)")
            #expect(try await llvs("restore", out, "--at", backup.version, "--store", store).status == 0)
            #expect(try snapshot(of: out) == backup.tree, "seed \(seed), round \(round)")
        }
    }

    /// Starts `llvs prune` on `store` under a watch of the store's files, made before the prune starts.
    func pruneWatched(_ store: String) throws -> (watch: FileEvents.Watch, prune: ChildProcess) {
        let watch = try FileEvents.Watch(
            [store, store + "/versions", store + "/packs", store + "/retention"], alsoOnWrites: true)
        return (watch, try startLLVS(["prune", "--store", store]))
    }

    @Test func checkReadDataNamesTheFilesAFlippedByteDamages() async throws {
        let store = path("store")
        #expect(try await llvs("init", "--store", store).status == 0)
        for index in 0..<48 {
            try write(path("src/part-\(index).bin"), SeededGenerator.bytes(200_000, seed: UInt64(index)))
        }
        try write(path("src/deep/victim.bin"), SeededGenerator.bytes(700_000, seed: 999))
        try write(path("src/copy-of-victim.bin"), SeededGenerator.bytes(700_000, seed: 999))
        #expect(try await llvs("backup", path("src"), "--name", "docs", "--store", store).status == 0)
        #expect(try await llvs("check", "--read-data", "--store", store).status == 0)

        // The subsets cover everything once, each about the fraction it names.
        var total: Int64 = 0
        for part in 1...4 {
            let subset = try await llvs("check", "--read-data-subset", "\(part)/4", "--json", "--store", store)
            let report = try #require(try JSONSerialization.jsonObject(with: subset.output) as? [String: Any])
            let read = try #require(report["bytesRead"] as? Int64),
                stored = try #require(report["bytesStored"] as? Int64)
            #expect(read > stored / 12 && read < stored / 2, "part \(part): \(read) of \(stored)")
            total += read
        }
        let whole = try await llvs("check", "--read-data", "--json", "--store", store)
        let report = try #require(try JSONSerialization.jsonObject(with: whole.output) as? [String: Any])
        #expect(report["bytesRead"] as? Int64 == total)

        // One byte flipped in the stored copy of the victim's bytes (kept plain: they do not compress).
        let needle = SeededGenerator.bytes(700_000, seed: 999).subdata(in: 400_000..<400_064)
        #expect(try flipStoredByte(of: needle, in: store))
        let quick = try await llvs("check", "--store", store)
        #expect(quick.status == 0, "without --read-data the data is not read: \(quick.text)")
        let check = try await llvs("check", "--read-data", "--store", store)
        #expect(check.status == 1)
        #expect(check.text.contains("problem: chunk "), "\(check.text)")
        #expect(check.text.contains("/deep/victim.bin") && check.text.contains("/copy-of-victim.bin"), "\(check.text)")
        #expect(!check.text.contains("part-"), "\(check.text)")
    }
}

extension BackupCommandTests {
    /// After a prune moved the kept records into a compacted pack, a flipped byte there is found as in a version file,
    /// and named by the backups and paths it damages.
    @Test func checkReadDataFindsAFlippedByteInACompactedStore() async throws {
        let store = path("store")
        #expect(try await llvs("init", "--store", store).status == 0)
        try write(path("src/deep/victim.bin"), SeededGenerator.bytes(700_000, seed: 999))
        for round in 0..<3 {
            try write(path("src/changing.bin"), SeededGenerator.bytes(300_000, seed: UInt64(round)))
            #expect(try await llvs("backup", path("src"), "--name", "docs", "--store", store).status == 0)
        }
        let prune = try await llvs("forget", "--keep-last", "1", "--prune", "--store", store)
        #expect(prune.status == 0 && prune.text.contains("Compacted"), "\(prune.text) \(prune.error)")
        #expect(try await llvs("check", "--read-data", "--store", store).status == 0)

        let needle = SeededGenerator.bytes(700_000, seed: 999).subdata(in: 400_000..<400_064)
        #expect(try flipStoredByte(of: needle, in: store))
        let check = try await llvs("check", "--read-data", "--store", store)
        #expect(check.status == 1)
        #expect(check.text.contains("problem: chunk ") && check.text.contains("/deep/victim.bin"), "\(check.text)")
        #expect(check.text.contains(".cpack"), "the pack is named: \(check.text)")
    }

    /// A compaction that cannot finish (here a kept chunk's record is damaged, which the mark does not read) leaves
    /// the files as they were and the prune, whose release is done, succeeds, saying why; `check` names the damage.
    @Test func aPruneWhoseCompactionFailsKeepsItsReleaseAndSaysWhy() async throws {
        let store = path("store")
        #expect(try await llvs("init", "--store", store).status == 0)
        let victim = SeededGenerator.bytes(300_000, seed: 999)
        try write(path("src/victim.bin"), victim)
        for round in 0..<2 {
            try write(path("src/changing.bin"), SeededGenerator.bytes(300_000, seed: UInt64(round)))
            #expect(try await llvs("backup", path("src"), "--name", "docs", "--store", store).status == 0)
        }
        // The victim's first chunk starts with its first bytes, kept plain: its record's tag is 9 bytes before them.
        let damaged = try changeStoredByte(of: victim.prefix(64), in: store, at: -9) { _ in 0x7f }
        #expect(damaged)
        let prune = try await llvs("forget", "--keep-last", "1", "--prune", "--store", store)
        #expect(prune.status == 0 && prune.text.contains("Freed"), "\(prune.text) \(prune.error)")
        #expect(prune.error.contains("not compacted"), "\(prune.error)")
        let packs = try FileManager.default.contentsOfDirectory(atPath: store + "/packs")
        #expect(packs.isEmpty, "\(packs)")
        let check = try await llvs("check", "--read-data", "--store", store)
        #expect(check.status == 1 && check.text.contains("victim.bin"), "\(check.text)")
    }

    /// `prune --before` on an app store (no backups): values only older versions hold are freed; every head keeps
    /// all of its values; an old version's freed value reads as released, said so.
    @Test func pruneBeforeFreesTheValuesOnlyOlderVersionsHold() async throws {
        let store = path("store")
        #expect(try await llvs("init", "--store", store).status == 0)
        var versions: [String] = []
        for round in 0..<3 {
            let put = try await llvs(
                "put", "doc", "-", "--store", store, input: SeededGenerator.bytes(600_000, seed: UInt64(round)))
            #expect(put.status == 0, "\(put.error)")
            let log = try await llvs("log", "--store", store, "--limit", "1", "--json")
            versions.append(
                try #require(
                    (try JSONSerialization.jsonObject(with: log.output) as? [[String: Any]])?.first?["id"] as? String))
        }
        #expect(try await llvs("put", "note", "-", "--store", store, input: Data("kept".utf8)).status == 0)
        let before = try diskBytes(store)
        // Every version is older than this date: only the heads keep their values.
        let prune = try await llvs("prune", "--before", "2099-01-01T00:00:00Z", "--store", store)
        #expect(prune.status == 0, "\(prune.error)")
        #expect(before - (try diskBytes(store)) > 1_000_000, "\(prune.text)")
        #expect(try await llvs("get", "doc", "--store", store).output == SeededGenerator.bytes(600_000, seed: 2))
        #expect(try await llvs("get", "note", "--store", store).output == Data("kept".utf8))
        let old = try await llvs("get", "doc", "--at", versions[0], "--store", store)
        #expect(old.status == 3 && old.error.contains("released"), "\(old.error)")
        #expect(try await llvs("check", "--read-data", "--store", store).status == 0)
    }
}

extension BackupCommandTests {
    /// `check --remote` reads a remote where it is: whole, it passes; a damaged changes file, a missing one and a
    /// missing predecessor are each named by version, and the exit status says so.
    @Test func checkOfARemoteNamesWhatIsDamagedOrMissing() async throws {
        let store = path("store")
        let backups = try await sixBackups(store: store)
        #expect(try await llvs("remote", "add", "home", "file://" + path("remote"), "--store", store).status == 0)
        #expect(try await llvs("push", "home", "--store", store).status == 0)
        let whole = try await llvs("check", "--remote", "home", "--read-data", "--store", store)
        #expect(whole.status == 0, "\(whole.text) \(whole.error)")
        #expect(whole.text.contains("changes files"), "\(whole.text)")

        let folder = path("remote")
        let damaged = backups[2].version, missing = backups[4].version, predecessor = backups[0].version
        var bytes = try Data(contentsOf: URL(fileURLWithPath: folder + "/changes/" + damaged))
        bytes[bytes.count / 2] ^= 0x20
        try bytes.write(to: URL(fileURLWithPath: folder + "/changes/" + damaged))
        try FileManager.default.removeItem(atPath: folder + "/changes/" + missing)
        try FileManager.default.removeItem(atPath: folder + "/versions/" + predecessor)

        let quick = try await llvs("check", "--remote", "home", "--store", store)
        #expect(quick.status == 1)
        #expect(quick.text.contains("version \(missing): it has no changes file"), "\(quick.text)")
        #expect(quick.text.contains("its predecessor \(predecessor) is not on the remote"), "\(quick.text)")
        #expect(!quick.text.contains("version \(damaged)"), "without --read-data changes are not read: \(quick.text)")
        let full = try await llvs("check", "--remote", "home", "--read-data", "--store", store)
        #expect(full.status == 1)
        #expect(full.text.contains("version \(damaged):"), "\(full.text)")
    }
}

extension BackupCommandTests {
    /// A remote that already held every backup frees the forgotten ones' bytes with `prune --remote`: its changes
    /// files are written again without them, a store cloned from it restores the kept backups whole, and it checks.
    @Test func pruneOfARemoteFreesWhatTheStoreReleased() async throws {
        let store = path("store")
        #expect(try await llvs("init", "--store", store).status == 0)
        #expect(try await llvs("remote", "add", "home", "file://" + path("remote"), "--store", store).status == 0)
        var trees: [[String: String]] = []
        for round in 0..<5 {
            try write(path("src/changing.bin"), SeededGenerator.bytes(1 << 20, seed: UInt64(300 + round)))
            let backup = try await llvs("backup", path("src"), "--name", "docs", "--store", store, "--to", "home")
            #expect(backup.status == 0, "\(backup.error)")
            trees.append(try snapshot(of: path("src")))
        }
        let before = try diskBytes(path("remote"))
        #expect(try await llvs("forget", "--keep-last", "2", "--prune", "--store", store).status == 0)
        // The store shares a remote: the release waits for a backup made after the collection, sent there.
        #expect(try await llvs("backup", path("src"), "--name", "docs", "--store", store, "--to", "home").status == 0)
        let prune = try await llvs("prune", "--remote", "home", "--store", store)
        #expect(prune.status == 0, "\(prune.error)")
        #expect(prune.text.contains("Freed") && prune.text.contains("home: wrote"), "\(prune.text)")
        let freed = before - (try diskBytes(path("remote")))
        #expect(freed > 2_500_000, "the remote freed \(freed) bytes: \(prune.text)")

        let check = try await llvs("check", "--remote", "home", "--read-data", "--store", store)
        #expect(check.status == 0, "\(check.text) \(check.error)")
        #expect(try await llvs("clone", "file://" + path("remote"), path("clone")).status == 0)
        #expect(try await llvs("restore", path("out"), "--store", path("clone")).status == 0)
        #expect(try snapshot(of: path("out")) == trees[4])
        let cloneCheck = try await llvs("check", "--read-data", "--store", path("clone"))
        #expect(cloneCheck.status == 0, "\(cloneCheck.text) \(cloneCheck.error)")
        // Nothing more to write the next time.
        let again = try await llvs("prune", "--remote", "home", "--store", store)
        #expect(again.text.contains("home: wrote 0 changes files"), "\(again.text)")

        // A snapshot of the pruned store says what was released, and a store started from it checks clean.
        let snapshot = try await llvs("snapshot", "home", "--store", store)
        #expect(snapshot.status == 0, "\(snapshot.error)")
        let manifest = try Data(contentsOf: URL(fileURLWithPath: path("remote/snapshots/manifest.json")))
        #expect(String(decoding: manifest, as: UTF8.self).contains("llvs-bundles-v2"))
        let started = try await llvs("clone", "file://" + path("remote"), path("from-snapshot"))
        #expect(started.status == 0 && started.text.contains("Restored snapshot"), "\(started.text) \(started.error)")
        let startedCheck = try await llvs("check", "--read-data", "--store", path("from-snapshot"))
        #expect(startedCheck.status == 0, "\(startedCheck.text) \(startedCheck.error)")
        #expect(try await llvs("restore", path("out2"), "--store", path("from-snapshot")).status == 0)
        #expect(try self.snapshot(of: path("out2")) == trees[4])
    }
}

extension BackupCommandTests {
    /// A second prune that releases more values of a version whose changes file the first wrote again writes it
    /// again: the remote keeps no byte a prune released, however many prunes it took.
    @Test func aLaterPruneOfARemoteWritesAgainAVersionItWroteBefore() async throws {
        let store = path("store")
        #expect(try await llvs("init", "--store", store).status == 0)
        #expect(try await llvs("remote", "add", "home", "file://" + path("remote"), "--store", store).status == 0)
        func backup() async throws {
            let run = try await llvs("backup", path("src"), "--name", "docs", "--store", store, "--to", "home")
            #expect(run.status == 0, "\(run.error)")
        }
        func remoteHolds(_ needle: Data) -> Bool { anyFile(under: path("remote"), holds: needle) }
        let first = SeededGenerator.bytes(1 << 20, seed: 1), second = SeededGenerator.bytes(1 << 20, seed: 2)
        try write(path("src/first.bin"), first)
        try write(path("src/second.bin"), second)
        try await backup()  // both stored by this backup's versions
        try write(path("src/second.bin"), SeededGenerator.bytes(1 << 20, seed: 3))
        try await backup()
        try write(path("src/first.bin"), SeededGenerator.bytes(1 << 20, seed: 4))
        try await backup()
        let needleOfFirst = first.subdata(in: 500_000..<500_064), needleOfSecond = second.subdata(in: 500_000..<500_064)

        // Keep the last two: only the first backup had the second file's first content.
        #expect(try await llvs("forget", "--keep-last", "2", "--prune", "--store", store).status == 0)
        try await backup()
        let once = try await llvs("prune", "--remote", "home", "--store", store)
        #expect(once.status == 0 && once.text.contains("Freed"), "\(once.text) \(once.error)")
        #expect(!remoteHolds(needleOfSecond) && remoteHolds(needleOfFirst))

        // Keep the last one: the first file's first content goes too, from the same changes file.
        #expect(try await llvs("forget", "--keep-last", "1", "--prune", "--store", store).status == 0)
        try await backup()
        let twice = try await llvs("prune", "--remote", "home", "--store", store)
        #expect(twice.status == 0 && twice.text.contains("Freed"), "\(twice.text) \(twice.error)")
        #expect(!remoteHolds(needleOfFirst), "\(twice.text)")
        let check = try await llvs("check", "--remote", "home", "--read-data", "--store", store)
        #expect(check.status == 0, "\(check.text) \(check.error)")
        let again = try await llvs("prune", "--remote", "home", "--store", store)
        #expect(again.text.contains("home: wrote 0 changes files"), "\(again.text)")
    }

    /// A changes file whose released values are a small part of it is left as it is: writing it again would upload
    /// all it keeps to free a little.
    @Test func aPruneOfARemoteLeavesAFileWithFewReleasedBytes() async throws {
        let store = path("store")
        #expect(try await llvs("init", "--store", store).status == 0)
        #expect(try await llvs("remote", "add", "home", "file://" + path("remote"), "--store", store).status == 0)
        let small = SeededGenerator.bytes(100_000, seed: 11)
        try write(path("src/big.bin"), SeededGenerator.bytes(2 << 20, seed: 10))
        try write(path("src/small.bin"), small)
        for round in 0..<2 {
            if round > 0 { try write(path("src/small.bin"), SeededGenerator.bytes(100_000, seed: 12)) }
            #expect(
                try await llvs("backup", path("src"), "--name", "docs", "--store", store, "--to", "home").status == 0)
        }
        #expect(try await llvs("forget", "--keep-last", "1", "--prune", "--store", store).status == 0)
        #expect(try await llvs("backup", path("src"), "--name", "docs", "--store", store, "--to", "home").status == 0)
        let prune = try await llvs("prune", "--remote", "home", "--store", store)
        #expect(prune.status == 0 && prune.text.contains("Freed"), "\(prune.text) \(prune.error)")
        #expect(prune.text.contains("wrote 0 changes files") && prune.text.contains("1 more hold"), "\(prune.text)")
        let held = anyFile(under: path("remote"), holds: small.prefix(64))
        #expect(held, "the first backup's changes file was written again")
        let check = try await llvs("check", "--remote", "home", "--read-data", "--store", store)
        #expect(check.status == 0, "\(check.text) \(check.error)")
    }

    /// `snapshots` lists every backup, oldest first, with what each added; forgotten ones only with `--all`.
    @Test func snapshotsListsEveryBackupWithWhatItAdded() async throws {
        let store = path("store")
        let backups = try await sixBackups(store: store)
        let listed = try await llvs("snapshots", "--json", "--store", store)
        let items = try #require(try JSONSerialization.jsonObject(with: listed.output) as? [[String: Any]])
        #expect(items.compactMap { $0["version"] as? String } == backups.map(\.version))
        for item in items.dropFirst() {
            // Each round wrote a new 1 MiB file and a new 300,000-byte one, and the listing of their folder.
            let added = try #require(item["added"] as? Int64)
            #expect(added > 1_348_000 && added < 1_360_000, "\(item)")
        }
        #expect(items.allSatisfy { ($0["date"] as? String)?.hasSuffix("Z") == true })
        #expect(try await llvs("forget", "--keep-last", "2", "--store", store).status == 0)
        let text = try await llvs("snapshots", "--store", store)
        #expect(text.text.contains("2 backups (4 forgotten"), "\(text.text)")
        let all = try await llvs("snapshots", "--all", "--store", store)
        #expect(all.text.components(separatedBy: "(forgotten)").count == 5, "\(all.text)")
        let stats = try #require(
            try JSONSerialization.jsonObject(with: try await llvs("stats", "--json", "--store", store).output)
                as? [String: Any])
        #expect(stats["backups"] as? Int == 2 && stats["forgottenBackups"] as? Int == 4, "\(stats)")
        #expect((stats["sources"] as? [Any])?.count == 1 && (stats["bytesOnDisk"] as? Int64 ?? 0) > 0, "\(stats)")
        // The restore size of the two kept backups: each counts its files whole.
        let sizes = backups.suffix(2).map { backup in
            backup.tree.values.compactMap { entry -> Int64? in
                let fields = entry.split(separator: " ")
                return fields.first == "file" && fields.count > 3 ? Int64(fields[3]) : nil
            }.reduce(0, +)
        }
        #expect(stats["restoreBytes"] as? Int64 == sizes.reduce(0, +), "\(stats)")
        #expect(try await llvs("forget", "--help").text.contains("examples:\n  llvs forget --keep-daily 7"))
    }
}

extension BackupCommandTests {
    /// Habits a restic or git user brings: `--store` before the command, a near miss named, dates in JSON as ISO 8601.
    @Test func theStoreMayComeFirstAMistypedCommandIsNamedAndJSONDatesAreISO() async throws {
        let store = path("store")
        #expect(try await llvs("init", "--store", store).status == 0)
        // An empty store has nothing to list, find, forget or check: that is not an error.
        for command in [["snapshots"], ["find", "x"], ["forget", "--keep-last", "1"], ["check"]] {
            let result = try await tests.run(command + ["--store", store])
            #expect(result.status == 0, "\(command): \(result.error)")
        }
        try write(path("a-file"), Data("x".utf8))
        #expect(try await llvs("backup", path("a-file"), "--store", store).status == 2)
        try write(path("src/a.txt"), Data("a".utf8))
        #expect(try await llvs("--store", store, "backup", path("src"), "--name", "docs").status == 0)
        let listed = try await llvs("--store=" + store, "backups", "--json")
        #expect(listed.status == 0, "\(listed.error)")
        let records = try #require(try JSONSerialization.jsonObject(with: listed.output) as? [[String: Any]])
        let date = try #require(records.first?["date"] as? String)
        #expect(RFC3339Date.parse(date) != nil, "\(date)")
        let typo = try await llvs("snapshtos", "--store", store)
        #expect(typo.status == 2 && typo.error.contains("Did you mean snapshots?"), "\(typo.error)")
    }
}

extension BackupCommandTests {
    /// `ls` lists what a backup holds, `dump` writes one of its files; a forgotten backup is refused by name.
    @Test func lsAndDumpBrowseABackup() async throws {
        let store = path("store")
        let backups = try await sixBackups(store: store)
        let third = backups[2].version
        let listed = try await llvs("ls", third, "--store", store)
        #expect(listed.status == 0, "\(listed.error)")
        #expect(
            listed.text.split(separator: "\n").map(String.init)
                == ["/", "/added-0.bin", "/added-1.bin", "/added-2.bin", "/changing.bin"], "\(listed.text)")
        let long = try await llvs("ls", "latest", "added-5.bin", "--long", "--json", "--store", store)
        let items = try #require(try JSONSerialization.jsonObject(with: long.output) as? [[String: Any]])
        #expect(items.count == 1 && items[0]["size"] as? Int == 300_000 && items[0]["kind"] as? String == "file")
        let dumped = try await llvs("dump", third, "changing.bin", "--store", store)
        #expect(dumped.output == SeededGenerator.bytes(1 << 20, seed: 102))
        #expect(try await llvs("dump", third, "nothing-here", "--store", store).status == 3)
        let diff = try await llvs("diff", backups[1].version, backups[3].version, "--store", store)
        #expect(
            diff.text
                == "+ /added-2.bin (293 KiB)\n+ /added-3.bin (293 KiB)\nM /changing.bin (1.0 MiB → 1.0 MiB)\n"
                + "2 added, 1 modified, 0 removed.\n", "\(diff.text)")
        // find: a name in every backup that holds it, oldest first; a pattern with '/' matches the path.
        let found = try await llvs("find", "added-1.*", "--store", store)
        #expect(
            found.text.split(separator: "\n").map { String($0.prefix(36)) } == backups.dropFirst().map(\.version),
            "\(found.text)")
        let byPath = try await llvs("find", "/changing.bin", "--json", "--store", store)
        #expect((try JSONSerialization.jsonObject(with: byPath.output) as? [Any])?.count == 6)
        #expect(try await llvs("find", "*.pdf", "--store", store).text.isEmpty)
        let values = try await llvs("diff", backups[1].version, backups[3].version, "--values", "--store", store)
        #expect(values.text.contains(".llvs-backup/chunk/"), "\(values.text)")
        #expect(try await llvs("forget", "--keep-last", "1", "--store", store).status == 0)
        let refused = try await llvs("dump", third, "changing.bin", "--store", store)
        #expect(refused.status == 3 && refused.error.contains("forgotten"), "\(refused.error)")
    }
}

extension BackupCommandTests {
    /// A store inside the tree it backs up is left out (and said so): backed up, it would grow by itself on each run.
    @Test func aStoreInsideTheBackedUpTreeIsNeverBackedUp() async throws {
        let tree = path("home")
        try write(tree + "/data.bin", SeededGenerator.bytes(2_000_000, seed: 11))
        #expect(try await llvs("init", "--store", tree + "/.store").status == 0)
        let first = try await llvs("backup", tree, "--store", tree + "/.store")
        #expect(first.status == 0 && first.error.contains(".store: an LLVS store"), "\(first.error)")
        let size = try diskBytes(tree + "/.store")
        let second = try await llvs("backup", tree, "--store", tree + "/.store")
        #expect(second.text.contains("Nothing changed"), "\(second.text)")
        #expect(try diskBytes(tree + "/.store") == size)
        // The run that found nothing new still shows, for a monitor: as the last run, beside the last backup.
        let backups = try await llvs("backups", "--store", tree + "/.store")
        #expect(backups.text.contains("nothing changed)"), "\(backups.text)")
        let records = try #require(
            try JSONSerialization.jsonObject(
                with: try await llvs("backups", "--json", "--store", tree + "/.store").output)
                as? [[String: Any]])
        #expect((records.first?["lastRun"] as? String).flatMap(RFC3339Date.parse) != nil, "\(records)")
        let listed = try await llvs("ls", "--store", tree + "/.store")
        #expect(listed.text == "/\n/data.bin\n", "\(listed.text)")
    }
}

extension BackupCommandTests {
    /// Exclusions as restic's options say them, remembered for the next backup of the source until --no-excludes.
    @Test func exclusionsLeaveOutWhatTheySayAndAreRemembered() async throws {
        let tree = path("tree")
        for (file, data) in [
            ("a.txt", Data("a".utf8)), ("b.tmp", Data("b".utf8)), ("sub/c.tmp", Data("c".utf8)),
            ("build/x.o", Data("x".utf8)), ("docs/keep.pdf", Data("pdf".utf8)),
            ("docs/big.bin", SeededGenerator.bytes(3 << 20, seed: 5)),
            ("cache/CACHEDIR.TAG", Data("Signature: 8a477f597d28d172789f06886806bc55\n".utf8)),
            ("cache/junk", Data("j".utf8)), ("private/.nobackup", Data()), ("private/secret", Data("s".utf8)),
            ("notes/old.log", Data("l".utf8)),
        ] {
            try write(tree + "/" + file, data)
        }
        try Data("# logs\n*.log\n".utf8).write(to: URL(fileURLWithPath: path("excludes.txt")))
        let store = path("store")
        #expect(try await llvs("init", "--store", store).status == 0)
        let first = try await llvs(
            "backup", tree, "--store", store, "--exclude", "*.tmp", "--exclude", "/build", "--exclude-caches",
            "--exclude-if-present", ".nobackup", "--exclude-larger-than", "1M", "--exclude-file", path("excludes.txt"))
        #expect(first.status == 0, "\(first.error)")
        let expected = "/\n/a.txt\n/docs\n/docs/keep.pdf\n/notes\n/sub\n"
        #expect(try await llvs("ls", "--store", store).text == expected)
        // Remembered: the next backup leaves out the same, and finds nothing changed.
        let second = try await llvs("backup", tree, "--store", store)
        #expect(second.text.contains("Nothing changed"), "\(second.text)")
        #expect(try await llvs("ls", "--store", store).text == expected)
        let all = try await llvs("backup", tree, "--store", store, "--no-excludes")
        #expect(all.status == 0, "\(all.error)")
        #expect(try await llvs("ls", "--store", store).text.split(separator: "\n").count == 18)
        #expect(try await llvs("backup", tree, "--store", store, "--exclude-larger-than", "lots").status == 2)
    }
}

extension BackupCommandTests {
    /// `stats` gives each source's bytes once deduplicated and as stored, every source's together (what they share
    /// counted once), and a remote's files and bytes from its listings.
    @Test func statsGivesEachSourcesBytesDeduplicatedAndStoredAndARemotesBytes() async throws {
        let store = path("store")
        #expect(try await llvs("init", "--store", store).status == 0)
        let shared = SeededGenerator.bytes(300_000, seed: 11)
        let text = Data(String(repeating: "every line of this file says the same thing\n", count: 8_000).utf8)
        try write(path("a/notes.txt"), text)
        try write(path("a/shared.bin"), shared)
        try write(path("b/shared.bin"), shared)
        try write(path("b/own.bin"), SeededGenerator.bytes(200_000, seed: 12))
        for source in ["a", "b"] {
            #expect(try await llvs("backup", path(source), "--name", source, "--store", store).status == 0)
        }
        #expect(try await llvs("remote", "add", "r", "file://" + path("remote"), "--store", store).status == 0)
        #expect(try await llvs("push", "r", "--store", store).status == 0)
        let result = try await llvs("stats", "--remote", "r", "--json", "--store", store)
        let stats = try #require(try JSONSerialization.jsonObject(with: result.output) as? [String: Any])
        let sources = try #require(stats["sources"] as? [[String: Any]])
        let bytes = { (name: String, key: String) -> Int64 in
            sources.first { $0["name"] as? String == name }?[key] as? Int64 ?? -1
        }
        // Their files and one listing each; the text compresses to almost nothing, the random bytes not at all.
        #expect(bytes("a", "uniqueBytes") > Int64(text.count + shared.count), "\(stats)")
        #expect(bytes("a", "uniqueBytes") < Int64(text.count + shared.count) + 1_000, "\(stats)")
        #expect(bytes("a", "storedBytes") < Int64(shared.count) + 20_000, "\(stats)")
        #expect(bytes("b", "storedBytes") > 500_000 && bytes("b", "storedBytes") < 502_000, "\(stats)")
        // The shared file's chunk once for both sources.
        #expect(
            stats["uniqueBytes"] as? Int64 == bytes("a", "uniqueBytes") + bytes("b", "uniqueBytes") - 300_000,
            "\(stats)")
        let remote = try #require((stats["remotes"] as? [[String: Any]])?.first)
        var onDisk: Int64 = 0, files = 0
        let walk = try #require(FileManager.default.enumerator(atPath: path("remote")))
        while let name = walk.nextObject() as? String {
            let attributes = try FileManager.default.attributesOfItem(atPath: path("remote") + "/" + name)
            guard attributes[.type] as? FileAttributeType == .typeRegular else { continue }
            onDisk += (attributes[.size] as? NSNumber)?.int64Value ?? 0
            files += 1
        }
        #expect(remote["name"] as? String == "r" && remote["files"] as? Int == files, "\(remote)")
        #expect(remote["bytes"] as? Int64 == onDisk && onDisk > 500_000, "\(remote)")
        let human = try await llvs("stats", "--store", store)
        #expect(human.text.contains("  a: 1 backup") && human.text.contains("once deduplicated"), "\(human.text)")
        #expect(
            try await llvs("stats", "--remote", "r", "--all-remotes", "--store", store).error.contains(
                "give --remote or --all-remotes, not both"))
    }
}
