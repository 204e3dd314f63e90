import Foundation
import LLVS
import LLVSSupport
import Synchronization

/// The checks, in the order of conformance.md. Each works only inside its own folder.
enum ConformanceChecks {
    static let all: [ConformanceCheck] = [
        ConformanceCheck(id: "not-found", section: 1, title: "missing files and folders give notFound", run: notFound),
        ConformanceCheck(
            id: "folders", section: 2, title: "make, list, remove folders; kinds told apart", run: folders),
        ConformanceCheck(id: "files", section: 3, title: "write, read back, overwrite, empty file", run: files),
        ConformanceCheck(
            id: "large-file", section: 3, title: "a file above the simple-upload limit, through local files",
            run: largeFile),
        ConformanceCheck(
            id: "large-overwrite", section: 3, title: "a large file overwritten by another large file",
            run: largeOverwrite),
        ConformanceCheck(id: "ranges", section: 3, title: "ranged reads a-b, a-, last n", run: ranges),
        ConformanceCheck(id: "names", section: 4, title: "awkward names round-trip", run: names),
        ConformanceCheck(
            id: "case-only-names", section: 4, title: "names that differ only in case, as the service keeps them",
            run: caseOnlyNames),
        ConformanceCheck(
            id: "unicode-forms", section: 4, title: "composed and decomposed names come back byte for byte",
            run: unicodeForms),
        ConformanceCheck(id: "listing", section: 5, title: "a listing longer than a page", run: listing),
        ConformanceCheck(id: "integrity", section: 6, title: "reported size and checksum match", run: integrity),
        ConformanceCheck(
            id: "failed-upload", section: 7, title: "a failed upload leaves the old file", run: failedUpload),
        ConformanceCheck(
            id: "source-fails-part-way", section: 7, title: "a source that fails part way leaves nothing half-written",
            run: sourceFailsPartWay),
        ConformanceCheck(id: "rate-limit", section: 7, title: "429/503 with Retry-After is waited out", run: rateLimit),
        ConformanceCheck(
            id: "dropped-connection", section: 7, title: "a dropped connection is retried", run: droppedConnection),
        ConformanceCheck(
            id: "answer-lost", section: 7,
            title: "an answer lost after the server acted: no error, no duplicate, no loss", run: answerLost),
        ConformanceCheck(
            id: "interrupted-upload", section: 7,
            title: "an upload cut off mid-body leaves the old file or the new one whole", run: interruptedUpload),
        ConformanceCheck(id: "expired-token", section: 7, title: "an expired token is refreshed", run: expiredToken),
        ConformanceCheck(
            id: "revoked-token", section: 7, title: "a refused token is reported as unauthorized", run: revokedToken),
        ConformanceCheck(
            id: "concurrency", section: 8, title: "many transfers at once into one folder", run: concurrency),
        ConformanceCheck(
            id: "racing-uploads", section: 8, title: "uploads racing for one name: one wins whole", run: racingUploads),
        ConformanceCheck(
            id: "create-only", section: 8, title: "a create leaves a file already there; at once, one create wins",
            run: createOnly),
        ConformanceCheck(
            id: "layouts", section: 9, title: "versions go and come back whole in the upstream and compact layouts",
            run: layouts),
    ]

    // MARK: Helpers

    static func require(_ condition: Bool, _ message: @autoclosure () -> String) throws {
        if !condition { throw ConformanceFailure(message()) }
    }

    /// Runs `body` and requires that it fails with an error `matches` accepts.
    static func requireFailure(
        _ what: String, matches: (CloudFileSystemError) -> Bool, _ body: () async throws -> Void
    ) async throws {
        do {
            try await body()
        } catch let error as CloudFileSystemError {
            try require(matches(error), "\(what): expected a different error, got \(error)")
            return
        } catch {
            throw ConformanceFailure("\(what): expected a CloudFileSystemError, got \(error)")
        }
        throw ConformanceFailure("\(what): expected an error, but it succeeded")
    }

    static func isNotFound(_ error: CloudFileSystemError) -> Bool {
        if case .notFound = error { true } else { false }
    }

    static func bytes(_ count: Int, seed: UInt64) -> Data { SeededGenerator.bytes(count, seed: seed) }

    /// A local file of `size` seeded bytes, written and hashed a MiB at a time, and removed when it goes: the large-file
    /// checks take any size (`--large-file-mib`) in bounded memory.
    struct LargeLocalFile: ~Copyable {
        let url: URL
        let size: Int64
        let sha256: String

        init(size: Int, seed: UInt64) throws {
            let url = ConformanceLocalFiles.make()
            let digest = DigestStream(.sha256)
            do {
                try SeededGenerator.writeFile(url, count: size, seed: seed, each: digest.update)
            } catch {
                // `deinit` does not run for a value that was never whole.
                try? FileManager.default.removeItem(at: url)
                throw error
            }
            self.url = url
            self.size = Int64(size)
            sha256 = digest.finalizeHex()
        }

        deinit { try? FileManager.default.removeItem(at: url) }

        /// Whether `other` holds exactly these bytes: its size, then its SHA-256 read a MiB at a time.
        func matches(_ other: URL) throws -> Bool {
            guard let found = try FileManager.default.attributesOfItem(atPath: other.path)[.size] as? Int64,
                found == size
            else { return false }
            return try ChecksumStream.text(ofFileAt: other, .sha256) == sha256
        }
    }

    /// The run's fault control when it can inject `fault`; otherwise the check is skipped, saying why.
    /// Fails the check when an injected fault is still waiting once the operation meant to meet it is done: the
    /// check would have proved nothing (a fault that lands on no request, or on a later check's).
    static func requireMet(_ faults: any FaultControl, _ what: String) async throws {
        guard let pending = await faults.pendingFaults else { return }
        try require(pending == 0, "the fault meant for \(what) never came to pass (\(pending) still waiting)")
    }

    static func faultControl(for fault: InjectedFault, _ context: ConformanceContext) throws -> any FaultControl {
        guard let faults = context.options.faults else {
            throw ConformanceSkip("needs faults injected: run with --faults (or against a mock)")
        }
        guard faults.supportedFaults.contains(fault) else { throw ConformanceSkip(faults.unsupportedReason(fault)) }
        return faults
    }

    // MARK: 1. Not found

    static func notFound(_ c: ConformanceContext) async throws -> CheckOutcome {
        let fs = c.fileSystem
        try await fs.makeFolder(c.folder)
        for path in [c.path("missing"), c.path("a/b/c/missing")] {
            try await requireFailure("download \(path)", matches: isNotFound) { _ = try await fs.download(path) }
            try await requireFailure("metadata \(path)", matches: isNotFound) { _ = try await fs.metadata(path) }
            try await requireFailure("list \(path)", matches: isNotFound) { _ = try await fs.list(path) }
            try await requireFailure("read a range of \(path)", matches: isNotFound) {
                _ = try await fs.read(path, range: .from(0))
            }
            try require(try await !fs.exists(path), "\(path) should not exist")
            try await fs.removeFile(path)
            try await fs.removeFolder(path)
        }
        try require(try await fs.listNames(c.path("nowhere")).isEmpty, "listNames of a missing folder should be empty")
        return .passed
    }

    // MARK: 2. Folders

    /// A listing of a file is refused as the wrong kind (or as no folder there).
    static func requireListingAFileFails(_ fs: any CloudFileSystem, _ path: String) async throws {
        try await requireFailure(
            "list a file as a folder",
            matches: { error in
                switch error {
                case .wrongKind, .notFound: true;
                default: false
                }
            }
        ) { _ = try await fs.list(path) }
    }

    /// Folders on a remote that keeps no empty folder: those a file makes are listed, looked at and removed as folders,
    /// and a file is still told from a folder.
    static func foldersMadeByFiles(_ c: ConformanceContext) async throws -> CheckOutcome {
        let fs = c.fileSystem
        try await fs.makeFolder(c.path("nested/deeper/deepest"))
        try await fs.upload(Data("deep".utf8), to: c.path("nested/deeper/deepest/file.txt"))
        try require(try await fs.metadata(c.path("nested/deeper")).isFolder, "nested/deeper should be a folder")
        let items = try await fs.list(c.path("nested"))
        try require(
            items.map(\.name) == ["deeper"] && items[0].isFolder, "nested should list one folder, deeper; got \(items)")
        try await fs.removeFolder(c.path("nested"))
        try require(try await !fs.exists(c.path("nested")), "a removed full folder should be gone")
        try await fs.upload(Data("file".utf8), to: c.path("plain"))
        try await requireListingAFileFails(fs, c.path("plain"))
        return .passed
    }

    static func folders(_ c: ConformanceContext) async throws -> CheckOutcome {
        let fs = c.fileSystem
        guard fs.capabilities.keepsEmptyFolders else { return try await foldersMadeByFiles(c) }
        try await fs.makeFolder(c.path("made"))
        try await fs.makeFolder(c.path("made"))
        try require(try await fs.list(c.path("made")).isEmpty, "a new folder should list empty")
        try await fs.makeFolder(c.path("nested/deeper/deepest"))
        try require(try await fs.metadata(c.path("nested/deeper")).isFolder, "nested/deeper should be a folder")
        let items = try await fs.list(c.path("nested"))
        try require(
            items.map(\.name) == ["deeper"] && items[0].isFolder, "nested should list one folder, deeper; got \(items)")

        try await fs.upload(Data("x".utf8), to: c.path("full/a/file.txt"))
        try await fs.upload(Data("y".utf8), to: c.path("full/b.txt"))
        try await fs.removeFolder(c.path("full"))
        try require(try await !fs.exists(c.path("full")), "a removed full folder should be gone")
        try await fs.removeFolder(c.path("made"))
        try require(try await !fs.exists(c.path("made")), "a removed empty folder should be gone")

        try await fs.upload(Data("file".utf8), to: c.path("plain"))
        try await requireListingAFileFails(fs, c.path("plain"))
        try await requireFailure(
            "make a folder where a file is",
            matches: { error in
                switch error {
                case .wrongKind, .alreadyExists: true;
                default: false
                }
            }
        ) { try await fs.makeFolder(c.path("plain")) }
        try await requireFailure(
            "download a folder",
            matches: { error in
                switch error {
                case .wrongKind, .notFound: true;
                default: false
                }
            }
        ) { _ = try await fs.download(c.path("nested")) }
        return .passed
    }

    // MARK: 3. Files

    static func files(_ c: ConformanceContext) async throws -> CheckOutcome {
        let fs = c.fileSystem
        let first = bytes(1000, seed: 3)
        try await fs.upload(first, to: c.path("file.bin"))
        try require(try await fs.download(c.path("file.bin")) == first, "the file should read back byte for byte")
        let second = bytes(333, seed: 4)
        try await fs.upload(second, to: c.path("file.bin"))
        try require(
            try await fs.download(c.path("file.bin")) == second, "an overwritten file should hold the new contents")
        try require(
            try await fs.metadata(c.path("file.bin")).size == 333, "an overwritten file should report the new size")
        try await fs.upload(Data(), to: c.path("empty"))
        try require(try await fs.download(c.path("empty")).isEmpty, "an empty file should read back empty")
        try require(try await fs.metadata(c.path("empty")).size == 0, "an empty file should report size 0")
        try await fs.removeFile(c.path("file.bin"))
        try require(try await !fs.exists(c.path("file.bin")), "a removed file should be gone")
        return .passed
    }

    static func largeFile(_ c: ConformanceContext) async throws -> CheckOutcome {
        let fs = c.fileSystem
        let local = try LargeLocalFile(size: c.options.largeFileSize, seed: 5)
        let back = local.url.appendingPathExtension("back")
        defer { try? FileManager.default.removeItem(at: back) }
        try await fs.upload(fileAt: local.url, to: c.path("large.bin"))
        try require(
            try await fs.metadata(c.path("large.bin")).size == local.size,
            "the large file should report \(local.size) bytes")
        try await fs.download(c.path("large.bin"), toFileAt: back)
        try require(try local.matches(back), "the large file should download byte for byte")
        return .passed
    }

    /// A large file replaced by another large file of a different size: the chunked path of an existing file (a new
    /// version, a session over an item), which a first upload does not take.
    static func largeOverwrite(_ c: ConformanceContext) async throws -> CheckOutcome {
        let fs = c.fileSystem
        // From files, as large values travel: over 4 MiB an exchange moves them through files, never whole in memory.
        let first = try LargeLocalFile(size: c.options.largeFileSize, seed: 12)
        let second = try LargeLocalFile(size: c.options.largeFileSize + 4321, seed: 13)
        let back = second.url.appendingPathExtension("back")
        defer { try? FileManager.default.removeItem(at: back) }
        try await fs.upload(fileAt: first.url, to: c.path("replaced-large.bin"))
        try await fs.upload(fileAt: second.url, to: c.path("replaced-large.bin"))
        try require(
            try await fs.metadata(c.path("replaced-large.bin")).size == second.size,
            "the replaced file should report the new size")
        try await fs.download(c.path("replaced-large.bin"), toFileAt: back)
        try require(try second.matches(back), "the replaced file should hold the second contents whole")
        let names = try await fs.list(c.folder).map(\.name)
        try require(names == ["replaced-large.bin"], "one file should be listed after the overwrite, got \(names)")
        return .passed
    }

    static func ranges(_ c: ConformanceContext) async throws -> CheckOutcome {
        let fs = c.fileSystem
        let data = bytes(10_000, seed: 6)
        try await fs.upload(data, to: c.path("ranged.bin"))
        try require(
            try await fs.read(c.path("ranged.bin"), range: .bytes(100, 199)) == data[100...199], "bytes 100-199")
        try require(try await fs.read(c.path("ranged.bin"), range: .from(9_990)) == data[9_990...], "bytes 9990-")
        try require(try await fs.read(c.path("ranged.bin"), range: .last(17)) == data.suffix(17), "the last 17 bytes")
        try require(
            try await fs.read(c.path("ranged.bin"), range: .bytes(9_995, 20_000)) == data[9_995...],
            "a range past the end is clipped")
        return .passed
    }

    // MARK: 4. Names

    static let awkwardNames = [
        "with space.txt", "êé.txt", "世界.txt", "emoji 😀.txt", "percent%.txt", "hash#.txt", "question?.txt", "plus+.txt",
        "amp&.txt", "quote\".txt", "apostrophe'.txt", " leading space.txt", "trailing space.txt ", "test%46.txt",
        "semi;colon=equals,comma.txt", "brackets[]{}().txt", String(repeating: "long", count: 50) + ".txt",
    ]

    /// The awkward names, plus for a connector that declares a name encoding every character it encodes and the
    /// look-alikes it encodes to (which must come back as written, not decoded).
    static func names(for capabilities: CloudCapabilities) -> [String] {
        guard let encoding = capabilities.nameEncoding else { return awkwardNames }
        let forbidden = String(encoding.forbidden.sorted())
        let lookAlikes = encoding.encode(forbidden)
        return awkwardNames + [
            "all \(forbidden) here.txt", "look-alikes \(lookAlikes).txt", "quote \u{201B}.txt", "dot at end.",
            "space at end ",
        ]
    }

    static func names(_ c: ConformanceContext) async throws -> CheckOutcome {
        let fs = c.fileSystem
        let awkwardNames = names(for: fs.capabilities)
        for (index, name) in awkwardNames.enumerated() {
            try await fs.upload(Data(name.utf8), to: c.path(name))
            try require(
                try await fs.download(c.path(name)) == Data(name.utf8), "\"\(name)\" should read back (\(index))")
        }
        let listed = Set(try await fs.list(c.folder).map(\.name))
        for name in awkwardNames {
            try require(
                listed.contains(name), "\"\(name)\" should be listed under the same name; listed \(listed.sorted())")
        }
        try require(
            listed.count == awkwardNames.count, "the listing should hold exactly the names written; got \(listed.count)"
        )
        for name in awkwardNames { try await fs.removeFile(c.path(name)) }
        try require(try await fs.listNames(c.folder).isEmpty, "every awkward name should be removable")
        return .passed
    }

    /// `Case.txt` then `case.txt`: two files on a service that keeps case, each with its own contents; one file (the
    /// second contents) on a service whose names ignore case (`caseInsensitiveNames`), never an error or a mix.
    static func caseOnlyNames(_ c: ConformanceContext) async throws -> CheckOutcome {
        let fs = c.fileSystem
        try await fs.upload(Data("upper".utf8), to: c.path("Case.txt"))
        try await fs.upload(Data("lower".utf8), to: c.path("case.txt"))
        let listed = try await fs.list(c.folder).map(\.name)
        if fs.capabilities.caseInsensitiveNames {
            try require(
                listed.count == 1 && listed[0].lowercased() == "case.txt",
                "names that ignore case should list one file, got \(listed)")
            try require(
                try await fs.download(c.path("Case.txt")) == Data("lower".utf8),
                "the second upload should have replaced the first")
        } else {
            try require(
                Set(listed) == ["Case.txt", "case.txt"], "names that keep case should list both files, got \(listed)")
            try require(
                try await fs.download(c.path("Case.txt")) == Data("upper".utf8), "Case.txt should keep its own contents"
            )
            try require(
                try await fs.download(c.path("case.txt")) == Data("lower".utf8), "case.txt should keep its own contents"
            )
        }
        return .passed
    }

    /// A name with a composed `é` (U+00E9) and one with a decomposed `é` (e, U+0301) are listed and read back with
    /// exactly the scalars written. Then the two spellings of one name, in one folder: two files, each with its own
    /// contents, where the service keeps them apart; one file holding the second contents where it takes them for one
    /// name (`canonicallyEquivalentNamesCollide`). Swift compares strings by canonical equivalence, so names are
    /// compared as scalars here: a connector (or service) that normalizes one form into the other would pass a `==`.
    static func unicodeForms(_ c: ConformanceContext) async throws -> CheckOutcome {
        let fs = c.fileSystem
        func scalars(_ name: String) -> [UInt32] { name.unicodeScalars.map(\.value) }
        let composed = "composed-\u{E9}t\u{E9}.txt", decomposed = "decomposed-e\u{301}te\u{301}.txt"
        for name in [composed, decomposed] { try await fs.upload(Data(name.utf8), to: c.path(name)) }
        let listed = try await fs.list(c.folder).map { scalars($0.name) }
        for name in [composed, decomposed] {
            try require(
                listed.contains(scalars(name)),
                "\(name.debugDescription) should be listed with the scalars written \(scalars(name)); listed \(listed)")
            try require(
                try await fs.download(c.path(name)) == Data(name.utf8), "\(name.debugDescription) should read back")
        }
        let pair = CloudPath.join(c.folder, "pair")
        let nfc = "caf\u{E9}.txt", nfd = "cafe\u{301}.txt"
        try await fs.upload(Data("composed".utf8), to: CloudPath.join(pair, nfc))
        try await fs.upload(Data("decomposed".utf8), to: CloudPath.join(pair, nfd))
        let names = try await fs.list(pair).map { scalars($0.name) }
        if fs.capabilities.canonicallyEquivalentNamesCollide {
            try require(
                names.count == 1 && [scalars(nfc), scalars(nfd)].contains(names[0]),
                "the two spellings should be one file, listed as one of them; got \(names)")
            try require(
                try await fs.download(CloudPath.join(pair, nfc)) == Data("decomposed".utf8),
                "the second upload should have replaced the first")
        } else {
            try require(
                Set(names) == [scalars(nfc), scalars(nfd)],
                "the two spellings should be two files, each listed as written; got \(names)")
            try require(
                try await fs.download(CloudPath.join(pair, nfc)) == Data("composed".utf8),
                "the composed name should keep its own contents")
            try require(
                try await fs.download(CloudPath.join(pair, nfd)) == Data("decomposed".utf8),
                "the decomposed name should keep its own contents")
        }
        return .passed
    }

    // MARK: 5. Listing

    static func listing(_ c: ConformanceContext) async throws -> CheckOutcome {
        let fs = c.fileSystem
        let count = c.options.listingCount
        let names = (0..<count).map { String(format: "entry-%05d", $0) }
        try await forEachConcurrently(Array(names.enumerated()), limit: c.options.concurrentTransfers) { index, name in
            try await fs.upload(Data(repeating: 0x41, count: index % 64), to: c.path(name))
        }
        if fs.capabilities.keepsEmptyFolders {
            try await fs.makeFolder(c.path("subfolder"))
        } else {
            try await fs.upload(Data(), to: c.path("subfolder/inside"))
        }
        let items = try await fs.list(c.folder)
        try require(items.count == count + 1, "expected \(count + 1) entries, listed \(items.count)")
        let byName = Dictionary(items.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
        try require(byName.count == items.count, "the listing repeats names")
        for (index, name) in names.enumerated() {
            guard let item = byName[name] else { throw ConformanceFailure("\(name) is missing from the listing") }
            try require(!item.isFolder, "\(name) should be a file")
            try require(
                item.size == Int64(index % 64),
                "\(name) should be listed with size \(index % 64), got \(item.size.map(String.init) ?? "none")")
        }
        try require(byName["subfolder"]?.isFolder == true, "subfolder should be listed as a folder")
        let folderName = try CloudPath.name(c.folder)
        try require(byName[folderName] == nil || count == 0, "the listed folder itself should not be an entry")
        return .passed
    }

    // MARK: 6. Integrity

    /// Every checksum the connector declares must be reported for an upload, from memory and from a file, and
    /// match what was sent; a connector that declares none is checked by downloading and hashing, so this is never
    /// only a size check.
    static func integrity(_ c: ConformanceContext) async throws -> CheckOutcome {
        let fs = c.fileSystem
        let declared = fs.capabilities.checksums
        let data = bytes(70_000, seed: 7)
        let fromFile = bytes(90_001, seed: 8)
        let local = ConformanceLocalFiles.make()
        try fromFile.write(to: local)
        defer { try? FileManager.default.removeItem(at: local) }
        try await fs.upload(data, to: c.path("checked.bin"))
        try await fs.upload(fileAt: local, to: c.path("checked-file.bin"))
        for (name, sent) in [("checked.bin", data), ("checked-file.bin", fromFile)] {
            let item = try await fs.metadata(c.path(name))
            try require(
                item.size == Int64(sent.count),
                "\(name): size should be \(sent.count), got \(item.size.map(String.init) ?? "none")")
            for algorithm in declared.sorted(by: { $0.rawValue < $1.rawValue }) {
                guard let reported = item.checksums[algorithm] else {
                    throw ConformanceFailure(
                        "\(name): the connector declares \(algorithm) but the service reported none")
                }
                let expected = algorithm.text(of: sent)
                try require(
                    algorithm.matches(reported, expected),
                    "\(name): the service's \(algorithm) \(reported) should be \(expected)")
            }
            for (algorithm, reported) in item.checksums where !declared.contains(algorithm) {
                try require(
                    algorithm.matches(reported, algorithm.text(of: sent)),
                    "\(name): the reported \(algorithm) should match the data")
            }
            if declared.isEmpty {
                try require(
                    try await fs.download(c.path(name)) == sent, "\(name): the bytes read back should be the bytes sent"
                )
            }
        }
        let listed = try await fs.list(c.folder).first { $0.name == "checked.bin" }
        for algorithm in declared {
            guard let value = listed?.checksums[algorithm] else { continue }
            try require(
                algorithm.matches(value, algorithm.text(of: data)), "the listing's \(algorithm) should match the data")
        }
        return .passed
    }

    // MARK: 7. Failure

    /// The source names a local file that is not there, so the connector itself meets the failure (a source made
    /// with `UploadSource(file:)` would be refused before reaching it).
    static func failedUpload(_ c: ConformanceContext) async throws -> CheckOutcome {
        let fs = c.fileSystem
        try await fs.upload(Data("old".utf8), to: c.path("kept.txt"))
        let missing = UploadSource.file(
            FileManager.default.temporaryDirectory.appendingPathComponent("llvs-missing-\(UUID().uuidString)"), size: 3)
        do {
            try await fs.upload(missing, to: c.path("kept.txt"), mode: .replace)
            throw ConformanceFailure("uploading from a missing local file should fail")
        } catch is CloudFileSystemError {}
        try require(
            try await fs.download(c.path("kept.txt")) == Data("old".utf8), "a failed upload should leave the old file")
        do {
            try await fs.upload(missing, to: c.path("never.txt"), mode: .newName)
        } catch is CloudFileSystemError {}
        try require(try await !fs.exists(c.path("never.txt")), "a failed upload should leave no file behind")
        return .passed
    }

    /// A local file cut from 8 MiB to 2 MiB the moment the connector starts reading it (after it has taken its
    /// size): the upload fails part way, or it sends what the file holds once it reads it again. Either way the path
    /// then holds the old file, nothing, the whole original or the whole shortened file, never part of one.
    static func sourceFailsPartWay(_ c: ConformanceContext) async throws -> CheckOutcome {
        let fs = c.fileSystem
        let original = bytes(8 << 20, seed: 11)
        let local = ConformanceLocalFiles.make()
        try original.write(to: local)
        defer { try? FileManager.default.removeItem(at: local) }
        try await fs.upload(Data("old".utf8), to: c.path("replaced.bin"))
        for target in ["replaced.bin", "new.bin"] {
            try original.write(to: local)
            guard let watcher = ReadWatcher(path: local.path) else {
                return .skipped("inotify is not available to watch the source")
            }
            let path = local.path
            let cut = Task { await watcher.afterFirstRead(timeout: 30) { truncate(path, 2 << 20) } }
            var failed = false
            do { try await fs.upload(fileAt: local, to: c.path(target)) } catch is CloudFileSystemError {
                failed = true
            }
            try require(await cut.value, "\(target): the connector never read the source")
            let shortened = original.prefix(2 << 20)
            let stored = try? await fs.download(c.path(target))
            let acceptable: [Data?] =
                failed
                ? [target == "new.bin" ? nil : Data("old".utf8), original, Data(shortened)]
                : [original, Data(shortened)]
            try require(
                acceptable.contains(stored),
                "\(target): after a source cut part way the path holds \(stored.map { "\($0.count) bytes" } ?? "nothing") that are neither the old file, nor a whole version of the source (the upload \(failed ? "failed" : "succeeded"))"
            )
        }
        return .passed
    }

    /// A rate limit and an outage are waited out: the operation succeeds and, where the client records its waits, it
    /// decided on a wait at least as long as the refusal asked (its Retry-After), or on some wait where it named none.
    static func rateLimit(_ c: ConformanceContext) async throws -> CheckOutcome {
        let faults = try faultControl(for: .rateLimited, c)
        func waitedOut(_ fault: InjectedFault, _ operation: () async throws -> Void) async throws {
            let mark = faults.clientWaits?.count
            await faults.injectOnce(fault)
            try await operation()
            try await requireMet(faults, "a \(fault.rawValue) answer")
            guard let record = faults.clientWaits, let mark else { return }
            let waits = record.waits(after: mark), asked = faults.requestedWait(fault) ?? .nanoseconds(1)
            try require(
                waits.contains { $0 >= asked },
                "after an injected \(fault.rawValue) the client should have waited \(asked); it waited \(waits)")
        }
        try await waitedOut(.rateLimited) {
            try await c.fileSystem.upload(Data("after a 429".utf8), to: c.path("limited.txt"))
        }
        try await waitedOut(.serviceUnavailable) {
            try require(
                try await c.fileSystem.download(c.path("limited.txt")) == Data("after a 429".utf8),
                "the upload after a 429 should have landed")
        }
        return .passed
    }

    static func droppedConnection(_ c: ConformanceContext) async throws -> CheckOutcome {
        let faults = try faultControl(for: .droppedConnection, c)
        try await c.fileSystem.upload(Data("dropped".utf8), to: c.path("dropped.txt"))
        await faults.injectOnce(.droppedConnection)
        try require(
            try await c.fileSystem.download(c.path("dropped.txt")) == Data("dropped".utf8),
            "a download after a dropped connection should succeed")
        try await requireMet(faults, "the download")
        await faults.injectOnce(.droppedConnection)
        try require(
            try await c.fileSystem.list(c.folder).map(\.name) == ["dropped.txt"],
            "a listing after a dropped connection should succeed")
        try await requireMet(faults, "the listing")
        return .passed
    }

    /// The server carries out a creation, a replacement or a removal, then the connection drops before its answer:
    /// the operation must succeed (sent again, or found done), leave exactly one item, and lose nothing.
    static func answerLost(_ c: ConformanceContext) async throws -> CheckOutcome {
        let faults = try faultControl(for: .droppedConnection, c)
        let fs = c.fileSystem
        try await fs.makeFolder(c.folder)
        // Each lost answer is aimed at the request that acts (the PUT, the MKCOL, the DELETE), not at a look-up a
        // connector makes before it, and each must have been met.
        func losingTheAnswer(to what: String, _ operation: () async throws -> Void) async throws {
            await faults.injectOnChange(.droppedConnection)
            try await operation()
            try await requireMet(faults, what)
        }
        try await losingTheAnswer(to: "a new file") {
            try await fs.upload(Data("created once".utf8), to: c.path("created.txt"))
        }
        try await losingTheAnswer(to: "a replacement") {
            try await fs.upload(Data("replaced once".utf8), to: c.path("created.txt"))
        }
        if fs.capabilities.keepsEmptyFolders {
            try await losingTheAnswer(to: "a new folder") { try await fs.makeFolder(c.path("made once")) }
        } else {
            try await fs.upload(Data(), to: c.path("made once/inside"))
        }
        try await fs.upload(Data("doomed".utf8), to: c.path("removed.txt"))
        try await losingTheAnswer(to: "a removal") { try await fs.removeFile(c.path("removed.txt")) }
        let listed = try await fs.list(c.folder)
        try require(
            listed.map(\.name).sorted() == ["created.txt", "made once"],
            "one file and one folder should be listed, got \(listed.map(\.name).sorted())")
        try require(listed.first { $0.name == "made once" }?.isFolder == true, "made once should be a folder")
        try require(
            try await fs.download(c.path("created.txt")) == Data("replaced once".utf8),
            "created.txt should hold the replacement")
        return .passed
    }

    /// The connection drops half way through an upload's body, over an existing file and to a new name: the upload
    /// succeeds (sent again) or fails, and the path then holds the old file (or nothing) or the new one whole, never
    /// the half the server got.
    static func interruptedUpload(_ c: ConformanceContext) async throws -> CheckOutcome {
        let faults = try faultControl(for: .droppedMidUpload, c)
        let fs = c.fileSystem
        let old = Data("the old contents".utf8)
        let new = bytes(3 << 20, seed: 14)
        try await fs.upload(old, to: c.path("cut-over.bin"))
        for (name, before) in [("cut-over.bin", Optional(old)), ("cut-new.bin", nil)] {
            await faults.injectOnce(.droppedMidUpload)
            var failed = false
            do { try await fs.upload(new, to: c.path(name)) } catch is CloudFileSystemError { failed = true }
            try await requireMet(faults, "the upload of \(name)")
            let stored = try? await fs.download(c.path(name))
            let acceptable: [Data?] = failed ? [before, new] : [new]
            try require(
                acceptable.contains(stored),
                "\(name): after an upload cut off mid-body (which \(failed ? "failed" : "succeeded")) the path holds \(stored.map { "\($0.count) bytes" } ?? "nothing"), neither the old file nor the new one whole"
            )
        }
        return .passed
    }

    static func expiredToken(_ c: ConformanceContext) async throws -> CheckOutcome {
        let faults = try faultControl(for: .expiredToken, c)
        await faults.injectOnce(.expiredToken)
        try await c.fileSystem.upload(Data("fresh token".utf8), to: c.path("token.txt"))
        try await requireMet(faults, "the upload")
        try require(
            try await c.fileSystem.exists(c.path("token.txt")),
            "the upload with an expired token should succeed after a refresh")
        return .passed
    }

    static func revokedToken(_ c: ConformanceContext) async throws -> CheckOutcome {
        let faults = try faultControl(for: .revokedToken, c)
        await faults.injectOnce(.revokedToken)
        try await requireFailure(
            "a request with a refused token",
            matches: { error in
                if case .unauthorized = error { true } else { false }
            }
        ) { _ = try await c.fileSystem.exists(c.path("anything")) }
        try await requireMet(faults, "the look")
        return .passed
    }

    // MARK: 8. Concurrency

    static func concurrency(_ c: ConformanceContext) async throws -> CheckOutcome {
        let fs = c.fileSystem
        let count = c.options.concurrentTransfers * 2
        let indexes = Array(0..<count)
        try await forEachConcurrently(indexes, limit: c.options.concurrentTransfers) { i in
            try await fs.upload(bytes(1000 + i, seed: UInt64(100 + i)), to: c.path("parallel-\(i)"))
        }
        try await forEachConcurrently(indexes, limit: c.options.concurrentTransfers) { i in
            let data = try await fs.download(c.path("parallel-\(i)"))
            try require(data == bytes(1000 + i, seed: UInt64(100 + i)), "parallel-\(i) should read back byte for byte")
        }
        let names = Set(try await fs.list(c.folder).map(\.name))
        try require(
            names == Set(indexes.map { "parallel-\($0)" }),
            "the folder should list exactly the \(count) files written at once")
        return .passed
    }

    /// Several uploads of different contents to one new name at once: afterwards one file of that name, holding one
    /// upload's contents whole, never two files (a service that allows duplicate names) or a mix.
    static func racingUploads(_ c: ConformanceContext) async throws -> CheckOutcome {
        let fs = c.fileSystem
        let contenders = (0..<6).map { bytes(50_000 + $0, seed: UInt64(200 + $0)) }
        try await fs.makeFolder(c.folder)
        try await forEachConcurrently(contenders, limit: contenders.count) { data in
            try await fs.upload(data, to: c.path("contested.bin"))
        }
        let names = try await fs.list(c.folder).map(\.name)
        try require(names == ["contested.bin"], "one file should be listed after racing uploads, got \(names)")
        let stored = try await fs.download(c.path("contested.bin"))
        try require(
            contenders.contains(stored),
            "the file should hold one upload whole, got \(stored.count) bytes matching none")
        return .passed
    }

    /// `.create` makes a new file, and leaves one already there as it is (`alreadyExists`); a folder there is
    /// `wrongKind`. Where the service refuses a second create itself (`exclusiveCreate`), six creates of one new name
    /// at once give one success, whose bytes the file holds, and five `alreadyExists`.
    static func createOnly(_ c: ConformanceContext) async throws -> CheckOutcome {
        let fs = c.fileSystem
        let first = bytes(1_000, seed: 300), second = bytes(1_001, seed: 301)
        try await fs.upload(.data(first), to: c.path("created.bin"), mode: .create)
        try await requireFailure("a create over a file", matches: { $0 == .alreadyExists(path: c.path("created.bin")) })
        {
            try await fs.upload(.data(second), to: c.path("created.bin"), mode: .create)
        }
        try require(try await fs.download(c.path("created.bin")) == first, "a create replaced the file there")
        // A folder with a file in it: where folders are only prefixes (`keepsEmptyFolders` false), so it exists.
        try await fs.upload(Data("in a folder".utf8), to: c.path("a folder/inside.txt"))
        try await requireFailure(
            "a create over a folder", matches: { $0 == .wrongKind(path: c.path("a folder"), expectedFolder: false) }
        ) {
            try await fs.upload(.data(second), to: c.path("a folder"), mode: .create)
        }
        guard fs.capabilities.exclusiveCreate else { return .passed }
        let contenders = (0..<6).map { bytes(40_000 + $0, seed: UInt64(310 + $0)) }
        let won = Mutex<[Data]>([])
        try await forEachConcurrently(contenders, limit: contenders.count) { data in
            do {
                try await fs.upload(.data(data), to: c.path("contested-create.bin"), mode: .create)
                won.withLock { $0.append(data) }
            } catch CloudFileSystemError.alreadyExists {}
        }
        let winners = won.withLock { $0 }
        try require(winners.count == 1, "\(winners.count) of 6 creates at once succeeded; one should")
        try require(
            try await fs.download(c.path("contested-create.bin")) == winners.first,
            "the file should hold the one create that succeeded")
        return .passed
    }

    static func forEachConcurrently<T: Sendable>(
        _ items: [T], limit: Int, _ body: @escaping @Sendable (T) async throws -> Void
    ) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            var iterator = items.makeIterator()
            for _ in 0..<max(1, limit) {
                guard let item = iterator.next() else { break }
                group.addTask { try await body(item) }
            }
            while try await group.next() != nil {
                if let item = iterator.next() { group.addTask { try await body(item) } }
            }
        }
    }
}
