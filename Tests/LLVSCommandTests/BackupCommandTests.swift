import Foundation
import LLVSSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `llvs backup`, `restore` and `history` end to end: back up, sync, clone into another store, restore, compare.
@Suite final class BackupCommandTests {
    let tests: CommandLineTests

    init() throws { tests = try CommandLineTests() }

    @discardableResult
    func llvs(_ arguments: String..., input: Data? = nil) async throws -> CommandLineTests.Result {
        try await tests.run(arguments, input: input)
    }
    var folder: URL { tests.directory }

    /// Starts `llvs` with the test's configuration and returns it running, for a test that acts on it while it works
    /// (a kill, Ctrl-C); its standard output goes to `output`, or nowhere, and its standard error to the file
    /// `errors`, or nowhere.
    func startLLVS(_ arguments: [String], output: Pipe? = nil, errors: String? = nil) throws -> ChildProcess {
        let process = ChildProcess()
        process.executableURL = CommandLineTests.binary
        process.arguments = arguments
        process.currentDirectoryURL = folder
        process.environment = CommandLineTests.cleanEnvironment.merging(["XDG_CONFIG_HOME": path("config")]) { _, new in
            new
        }
        process.standardOutput = output
        if let errors {
            FileManager.default.createFile(atPath: errors, contents: nil)
            process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errors))
        } else {
            process.standardError = nil
        }
        try process.run()
        return process
    }
    func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

    /// Flips one byte of the stored copy of `needle` (bytes that do not compress, so the store keeps them plain) in a
    /// store's version files or packs; false when no file holds it.
    func flipStoredByte(of needle: Data, in store: String) throws -> Bool {
        try changeStoredByte(of: needle, in: store, at: 10) { $0 ^ 0x40 }
    }

    /// Changes the byte `delta` bytes from the start of the first stored copy of `needle` in a store's version files
    /// or packs; false when no file holds it.
    func changeStoredByte(
        of needle: Data, in store: String, at delta: Int, _ change: (UInt8) -> UInt8
    ) throws -> Bool {
        for file in filesUnder([store + "/versions", store + "/packs"]) {
            if var data = FileManager.default.contents(atPath: file), let range = data.range(of: needle) {
                data[range.lowerBound + delta] = change(data[range.lowerBound + delta])
                try data.write(to: URL(fileURLWithPath: file))
                return true
            }
        }
        return false
    }

    /// Whether any file under `folder` holds `needle`.
    func anyFile(under folder: String, holds needle: Data) -> Bool {
        filesUnder([folder]).contains { FileManager.default.contents(atPath: $0)?.range(of: needle) != nil }
    }

    /// Every path under the folders, theirs included.
    func filesUnder(_ folders: [String]) -> [String] {
        folders.flatMap { folder in
            (FileManager.default.enumerator(atPath: folder)?.allObjects as? [String] ?? []).map { folder + "/" + $0 }
        }
    }

    /// Every entry under `root`: kind, contents (or link target), mode and modification time.
    func snapshot(of root: String) throws -> [String: String] {
        var result: [String: String] = [:]
        let enumerator = FileManager.default.enumerator(atPath: root)!
        while let relative = enumerator.nextObject() as? String {
            let full = root + "/" + relative
            var info = stat()
            guard lstat(full, &info) == 0 else { continue }
            let mode = String(info.st_mode & 0o7777, radix: 8)
            switch info.st_mode & S_IFMT {
            case S_IFLNK: result[relative] = "link \(try FileManager.default.destinationOfSymbolicLink(atPath: full))"
            case S_IFDIR: result[relative] = "dir \(mode)"
            default:
                // SHA-256 of every byte, read in pieces (`Data.hashValue` covers the length and the first 80 bytes).
                let digest = try ChecksumStream.text(ofFileAt: URL(fileURLWithPath: full), .sha256)
                result[relative] =
                    "file \(mode) \(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec) \(info.st_size) \(digest)"
            }
        }
        return result
    }

    /// The comparison the restore tests rest on sees one flipped byte anywhere in a file, its time and size unchanged.
    @Test func theTreeComparisonSeesAByteFlippedDeepInALargeFile() throws {
        let file = path("tree/large.bin")
        try FileManager.default.createDirectory(atPath: path("tree"), withIntermediateDirectories: true)
        var data = Data((0..<(3 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        try data.write(to: URL(fileURLWithPath: file))
        var times = [timespec(tv_sec: 1_700_000_000, tv_nsec: 0), timespec(tv_sec: 1_700_000_000, tv_nsec: 0)]
        utimensat(AT_FDCWD, file, &times, 0)
        let before = try snapshot(of: path("tree"))
        data[1 << 20] ^= 0x01
        try data.write(to: URL(fileURLWithPath: file))
        utimensat(AT_FDCWD, file, &times, 0)
        #expect(try snapshot(of: path("tree")) != before)
    }

    /// Adds the remote `home` of a kind: a local folder, or a WebDAV or Google Drive mock started with `llvs-mock`
    /// (returned, so it lives as long as the test).
    func addRemote(_ kind: String) async throws -> AnyObject? {
        try await tests.addRemote(kind, folder: "Backups/this machine")
    }

    @Test(arguments: [
        "file", "webdav", "gdrive", "onedrive", "pcloud", "box", "dropbox", "s3", "s3-rclone", "s3-mock", "sftp",
    ])
    func backupSyncCloneAndRestoreGiveAByteIdenticalTree(remote kind: String) async throws {
        let source = path("source")
        let fm = FileManager.default
        try fm.createDirectory(atPath: source + "/nested/ünïcødé 世界/deeper", withIntermediateDirectories: true)
        try fm.createDirectory(atPath: source + "/empty folder", withIntermediateDirectories: true)
        try Data("kept".utf8).write(to: URL(fileURLWithPath: source + "/kept.txt"))
        try Data("first".utf8).write(to: URL(fileURLWithPath: source + "/modified.txt"))
        try Data("going".utf8).write(to: URL(fileURLWithPath: source + "/deleted.txt"))
        try Data().write(to: URL(fileURLWithPath: source + "/empty"))
        try Data("asked".utf8).write(to: URL(fileURLWithPath: source + "/what? trailing "))
        try Data("😀 emoji".utf8).write(to: URL(fileURLWithPath: source + "/nested/ünïcødé 世界/名前.txt"))
        try fm.createSymbolicLink(atPath: source + "/link-to-kept", withDestinationPath: "kept.txt")
        chmod(source + "/kept.txt", 0o600)
        // A 100 MiB file, written in pieces.
        try Data().write(to: URL(fileURLWithPath: source + "/nested/big.bin"))
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: source + "/nested/big.bin"))
        let piece = Data((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 131) })
        for _ in 0..<100 { handle.write(piece) }
        try handle.close()

        #expect(try await llvs("init", "--store", path("store")).status == 0)
        let mock = try await addRemote(kind)
        defer { withExtendedLifetime(mock) {} }
        let first = try await llvs("backup", source, "--store", path("store"), "--to", "home")
        #expect(first.status == 0, "\(first.error)")
        #expect(try await llvs("backup", source, "--store", path("store")).text.contains("Nothing changed"))
        // A new remote is compact on every kind, and reads back whole where it is.
        let checked = try await llvs("check", "--remote", "home", "--read-data", "--json", "--store", path("store"))
        let check = try #require(try JSONSerialization.jsonObject(with: checked.output) as? [String: Any])
        #expect(checked.status == 0 && check["format"] as? String == "compact", "\(check) \(checked.error)")
        #expect(
            (check["changesRead"] as? Int ?? 0) >= 1 && check["changesRead"] as? Int == check["versions"] as? Int,
            "\(check)")

        // Second backup: one file modified, one deleted.
        try Data("second".utf8).write(to: URL(fileURLWithPath: source + "/modified.txt"))
        try fm.removeItem(atPath: source + "/deleted.txt")
        let second = try await llvs("backup", source, "--store", path("store"), "--to", "home")
        #expect(second.text.contains("1 file(s) stored") && second.text.contains("1 removed"), "\(second.text)")

        #expect(try await llvs("clone", "home", path("clone")).status == 0)
        let restored = try await llvs("restore", path("restored"), "--store", path("clone"))
        #expect(restored.status == 0, "\(restored.error)")
        let original = try snapshot(of: source), copy = try snapshot(of: path("restored"))
        for key in Set(original.keys).union(copy.keys).sorted() where original[key] != copy[key] {
            Issue.record("\(key): \(original[key] ?? "absent") in the source, \(copy[key] ?? "absent") restored")
        }

        // The first backup is still there to restore, deleted file included.
        let versions =
            try JSONSerialization.jsonObject(
                with: try await llvs("history", "modified.txt", "--json", "--store", path("clone")).output)
            as! [[String: Any]]
        #expect(versions.map { $0["change"] as? String } == ["changed", "added"])
        let old = try #require(versions.last?["version"] as? String)
        #expect(
            try await llvs("restore", path("old"), "deleted.txt", "--at", old, "--store", path("clone")).status == 0)
        #expect(try String(contentsOfFile: path("old") + "/deleted.txt", encoding: .utf8) == "going")
        #expect(!fm.fileExists(atPath: path("old") + "/kept.txt"))
    }

    /// Root reads every file, so as root the backup runs as `nobody` (through util-linux's setpriv), for whom a
    /// mode-000 file is unreadable as it is for any user.
    @Test(
        .enabled(
            if: getuid() != 0 || FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")
                || CIEnvironment.requiresEveryTest,
            "as root, setpriv is needed to run as nobody"))
    func anUnreadableFileIsReportedAndTheRestIsBackedUp() async throws {
        let source = path("source")
        try FileManager.default.createDirectory(atPath: source, withIntermediateDirectories: true)
        try Data("fine".utf8).write(to: URL(fileURLWithPath: source + "/fine.txt"))
        try Data("secret".utf8).write(to: URL(fileURLWithPath: source + "/secret.txt"))
        try FileManager.default.createDirectory(atPath: source + "/folder", withIntermediateDirectories: true)
        try Data("also fine".utf8).write(to: URL(fileURLWithPath: source + "/folder/inner.txt"))
        chmod(source + "/secret.txt", 0)
        let store = path("store")
        var asUser: [String] = []
        if getuid() == 0 {
            // nobody must reach the test's folder and write the store.
            chmod(folder.path, 0o755)
            try FileManager.default.createDirectory(atPath: store, withIntermediateDirectories: true)
            chmod(store, 0o777)
            asUser = ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
        }
        func run(_ arguments: [String]) async throws -> CommandLineTests.Result {
            try await tests.run(arguments, through: asUser)
        }
        #expect(try await run(["init", "--store", store]).status == 0)
        let result = try await run(["backup", source, "--store", store])
        #expect(result.status == 0, "\(result.error)")
        #expect(result.error.contains("secret.txt"), "the unreadable file is reported: \(result.error)")
        #expect(result.text.contains("2 file(s) stored"), "the other files are backed up: \(result.text)")
        let restored = path("restored")
        #expect(try await tests.run(["restore", restored, "--store", store]).status == 0)
        #expect(try String(contentsOfFile: restored + "/folder/inner.txt", encoding: .utf8) == "also fine")
        #expect(
            !FileManager.default.fileExists(atPath: restored + "/secret.txt"),
            "the unreadable file is not in the backup")
    }

    /// Linux names are bytes: `café` composed and `café` decomposed are two files, which a backup keeps apart and a
    /// restore gives back, each with its own contents (value IDs are canonical; backed-up names are raw bytes).
    @Test func twoNamesThatDifferOnlyInNormalizationAreTwoFiles() async throws {
        let source = path("spellings")
        try FileManager.default.createDirectory(atPath: source, withIntermediateDirectories: true)
        // Pairs, not a dictionary: as Swift strings the two names are equal keys.
        let spellings = [("caf\u{E9}", "composed"), ("cafe\u{301}", "decomposed")]
        for (name, text) in spellings { try Data(text.utf8).write(to: URL(fileURLWithPath: source + "/" + name)) }
        try await llvs("init", "--store", path("store"))
        #expect(try await llvs("backup", source, "--store", path("store")).status == 0)
        #expect(try await llvs("restore", path("out"), "--store", path("store")).status == 0)
        var names: [[UInt8]] = []
        let folder = try #require(opendir(path("out")))
        while let entry = readdir(folder) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { Array($0.prefix { $0 != 0 }) }
            if name != Array(".".utf8), name != Array("..".utf8) { names.append(name) }
        }
        closedir(folder)
        #expect(Set(names) == Set(spellings.map { Array($0.0.utf8) }), "two files, each under its own bytes")
        for (name, text) in spellings {
            #expect(
                FileManager.default.contents(atPath: path("out") + "/" + name) == Data(text.utf8),
                "\(Array(name.unicodeScalars))")
        }
    }

    /// A folder's files are written several at once: every file of a large folder comes back whole, with its mode
    /// and time, and those a folder in DEST stands in the way of are each refused and listed in the folder's order,
    /// while the others are still written.
    @Test func aLargeFolderRestoresWholeAndItsRefusalsAreListedInOrder() async throws {
        let source = path("many")
        try FileManager.default.createDirectory(atPath: source + "/inner", withIntermediateDirectories: true)
        for index in 0..<300 {
            let name = String(format: "file-%03d.txt", index)
            try Data(repeating: UInt8(index % 251), count: 1 + index * 37).write(
                to: URL(fileURLWithPath: source + "/" + name))
            chmod(source + "/" + name, index.isMultiple(of: 2) ? 0o644 : 0o600)
        }
        try Data("inside".utf8).write(to: URL(fileURLWithPath: source + "/inner/leaf.txt"))
        try await llvs("init", "--store", path("store"))
        #expect(try await llvs("backup", source, "--store", path("store")).status == 0)

        #expect(try await llvs("restore", path("whole"), "--store", path("store")).status == 0)
        #expect(try snapshot(of: path("whole")) == snapshot(of: source))

        let blocked = ["file-007.txt", "file-150.txt", "file-299.txt"]
        for name in blocked {
            try FileManager.default.createDirectory(
                atPath: path("blocked") + "/" + name, withIntermediateDirectories: true)
        }
        let restore = try await llvs("restore", path("blocked"), "--store", path("store"))
        #expect(restore.status != 0 && restore.error.contains("3 entries were not restored"), "\(restore.error)")
        let listed = restore.error.split(separator: "\n").filter {
            $0.contains("not restored: ") && $0.contains("file-")
        }
        #expect(
            listed.count == 3
                && zip(listed, blocked).allSatisfy { $0.contains($1) && $0.contains("a folder is in the way") },
            "\(listed)")
        var expected = try snapshot(of: source)
        for name in blocked { expected[name] = nil }
        let written = try snapshot(of: path("blocked")).filter { !blocked.contains($0.key) }
        #expect(written == expected)
    }

    @Test func badBackupArgumentsAreClear() async throws {
        try await llvs("init", "--store", path("store"))
        // A directory that is not there is a wrong argument (exit 3 is for values, versions, backups and remotes).
        let missing = try await llvs("backup", path("missing"), "--store", path("store"))
        #expect(missing.status == 2 && missing.error.contains("is not a directory"), "\(missing.error)")
        // An empty store is not "no such thing": exit 1, saying so.
        let empty = try await llvs("restore", path("out"), "--store", path("store"))
        #expect(empty.status == 1 && empty.error.contains("The store is empty"), "\(empty.error)")
        #expect(try await llvs("restore", path("out"), "--before", "yesterday", "--store", path("store")).status == 2)
        #expect(try await llvs("history", "nothing", "--store", path("store")).status == 1)
    }
}
