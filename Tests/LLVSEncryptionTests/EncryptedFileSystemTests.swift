import Foundation
import LLVS
import LLVSConformance
import LLVSSupport
@testable import LLVSEncryption
import LLVSTestSupport
import Testing

@Suite struct EncryptedFileSystemTests {
    @Test func theConformanceSuitePassesThroughEncryptionOnALocalFolder() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        var options = ConformanceOptions()
        options.largeFileSize = 5 * 1024 * 1024 + 3
        options.listingCount = 200
        try await expectConformanceThroughEncryption(
            LocalFolderFileSystem(root: folder), options: options,
            skippable: checksNeedingFaults)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)
    }

    /// Markers in small and large files, from memory and from local files, and in the paths of values inside them:
    /// none is anywhere in the bytes on the remote.
    @Test func noPlaintextByteReachesTheRemote() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let encrypted = EncryptedFileSystem(
            base: LocalFolderFileSystem(root: folder.appendingPathComponent("remote")), folder: "", passphrase: "p",
            scratchFolder: folder.appendingPathComponent("scratch"))
        let marker = "MARKER-7f3a-home/user/Documents/taxes.pdf"
        try await encrypted.upload(Data(marker.utf8), to: "versions/small")
        var large = Data()
        for i in 0..<20_000 { large.append(Data("\(marker)-\(i)\n".utf8)) }
        try await encrypted.upload(large, to: "changes/large")
        try large.write(to: folder.appendingPathComponent("local"))
        try await encrypted.upload(fileAt: folder.appendingPathComponent("local"), to: "changes/from-file")
        #expect(try await encrypted.download("changes/from-file") == large)

        let needle = Data("MARKER-7f3a".utf8)
        let enumerator = FileManager.default.enumerator(atPath: folder.appendingPathComponent("remote").path)!
        var files = 0
        for case let name as String in enumerator {
            let url = folder.appendingPathComponent("remote").appendingPathComponent(name)
            guard let data = try? Data(contentsOf: url) else { continue }
            files += 1
            #expect(data.range(of: needle) == nil, "\(name) holds plaintext")
        }
        #expect(files == 5, "three sealed files and the key file, in encryption.json and under its own name")
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: folder.appendingPathComponent("scratch").path).isEmpty,
            "sealed copies are removed")
    }

    @Test func rangesAcrossChunkBoundariesReadTheRightBytes() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let encrypted = EncryptedFileSystem(base: LocalFolderFileSystem(root: folder), folder: "", passphrase: "p")
        let chunk = SealedFileLayout.chunkSize
        let data = bytes(40 * chunk + 77, seed: 9)
        try await encrypted.upload(data, to: "f")
        let cases: [(ByteRange, Range<Int>)] = [
            (.bytes(Int64(chunk - 10), Int64(chunk + 10)), (chunk - 10)..<(chunk + 11)),
            (.bytes(Int64(30 * chunk), Int64(30 * chunk)), (30 * chunk)..<(30 * chunk + 1)),
            (.from(Int64(39 * chunk + 5)), (39 * chunk + 5)..<data.count),
            (.last(Int64(chunk + 100)), (data.count - chunk - 100)..<data.count),
            (.bytes(0, Int64(data.count + 1000)), 0..<data.count),
        ]
        for (range, expected) in cases {
            #expect(try await encrypted.read("f", range: range) == data.subdata(in: expected), "\(range)")
        }
        #expect(try await encrypted.metadata("f").size == Int64(data.count))
    }
}

/// On a service whose names ignore case, `Case.txt` and `case.txt` are one file: a file written under one spelling
/// opens under the other, and a file an earlier build sealed under its spelling (as LLVS's upper-case IDs were)
/// still opens, whole, by every read.
@Suite struct CaseInsensitiveSealTests {
    @Test func eitherSpellingOpensAndFilesOfEarlierBuildsStillDo() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let remote = LocalFolderFileSystem(root: folder.appendingPathComponent("remote"))
        let earlier = EncryptedFileSystem(base: remote, folder: "", passphrase: "p", scratchFolder: folder)
        let large = SeededGenerator.bytes(300_000, seed: 4)
        // Sealed as a build that took every name as spelled did.
        try await earlier.upload(large, to: "versions/ABCDEF-0001")
        let now = EncryptedFileSystem(
            base: IgnoringCase(base: remote), folder: "", passphrase: "p", scratchFolder: folder)
        #expect(try await now.download("versions/ABCDEF-0001") == large)
        #expect(try await now.read("versions/ABCDEF-0001", range: .bytes(70_000, 70_099)) == large[70_000...70_099])
        try await now.download("versions/ABCDEF-0001", toFileAt: folder.appendingPathComponent("back"))
        #expect(try Data(contentsOf: folder.appendingPathComponent("back")) == large)

        try await now.upload(Data("sealed lower".utf8), to: "versions/Mixed-Case")
        // The service would serve this file under either spelling; here the folder keeps the one written.
        let reopened = EncryptedFileSystem(
            base: IgnoringCase(base: remote), folder: "", passphrase: "p", scratchFolder: folder)
        #expect(try await reopened.download("versions/Mixed-Case") == Data("sealed lower".utf8))
        #expect(try reopened.sealedName("versions/Mixed-Case") == "versions/mixed-case")
    }
}

/// A local folder that says its names ignore case, as Box's and OneDrive's do.
struct IgnoringCase: ForwardingFileSystem {
    var base: any CloudFileSystem
    var capabilities: CloudCapabilities {
        var capabilities = base.capabilities
        capabilities.caseInsensitiveNames = true
        return capabilities
    }
}
