import Foundation
import LLVS
import LLVSSupport
@testable import LLVSEncryption
import LLVSTestSupport
import Testing

/// The sealed file layout: sizes, round trips in memory and file to file, and every kind of tampering refused.
@Suite struct SealedFileTests {
    static let chunk = SealedFileLayout.chunkSize
    static let sizes = [0, 1, 100, chunk - 1, chunk, chunk + 1, 2 * chunk, 70 * chunk + 5]
    let key = SecretKey.random()

    @Test func everyPlaintextSizeHasOneSealedSizeAndBack() {
        for plain in Self.sizes.map(Int64.init) {
            #expect(SealedFileLayout.plainSize(sealed: SealedFileLayout.sealedSize(plain: plain)) == plain)
        }
        // Every sealed size below `limit` that some plaintext size gives reads back as that size, and no other does.
        let limit = Int64(3 * SealedFileLayout.sealedChunkSize + 100)
        var valid = 0
        for sealed in Int64(0)..<limit {
            guard let plain = SealedFileLayout.plainSize(sealed: sealed) else { continue }
            #expect(SealedFileLayout.sealedSize(plain: plain) == sealed, "\(sealed) bytes read as \(plain)")
            valid += 1
        }
        #expect(valid == (Int64(0)..<limit).filter { SealedFileLayout.sealedSize(plain: $0) < limit }.count)
    }

    @Test(arguments: sizes)
    func dataRoundTripsInMemoryAndThroughFiles(size: Int) throws {
        let plain = bytes(size, seed: UInt64(size))
        let sealed = SealedFileCodec.seal(plain, key: key, path: "changes/A")
        #expect(Int64(sealed.count) == SealedFileLayout.sealedSize(plain: Int64(size)))
        #expect(try SealedFileCodec.open(sealed, key: key, path: "changes/A", displayPath: "changes/A") == plain)

        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let source = folder.appendingPathComponent("plain"), sealedFile = folder.appendingPathComponent("sealed"),
            back = folder.appendingPathComponent("back")
        try plain.write(to: source)
        let whole = try SealingFileWriter(url: sealedFile, key: key, path: "changes/A")
        try whole.write(try Data(contentsOf: source))
        try whole.finish()
        #expect(
            try SealedFileCodec.open(
                Data(contentsOf: sealedFile), key: key, path: "changes/A", displayPath: "changes/A") == plain)
        try FileManager.default.copyItem(at: sealedFile, to: back)
        try SealedFileCodec.openInPlace(back, key: key, path: "changes/A", displayPath: "changes/A")
        #expect(try Data(contentsOf: back) == plain)
        // Sealed as it is written, in pieces of awkward sizes (a staged file), then opened where it is.
        let staged = folder.appendingPathComponent("staged")
        let writer = try SealingFileWriter(url: staged, key: key, path: "changes/A")
        var offset = 0, piece = 1
        while offset < plain.count {
            let end = min(plain.count, offset + piece)
            try writer.write(plain.subdata(in: offset..<end))
            offset = end
            piece = piece * 7 + 3
        }
        try writer.finish()
        #expect(
            try SealedFileCodec.open(Data(contentsOf: staged), key: key, path: "changes/A", displayPath: "changes/A")
                == plain)
        try SealedFileCodec.openInPlace(staged, key: key, path: "changes/A", displayPath: "changes/A")
        #expect(try Data(contentsOf: staged) == plain)
    }

    @Test func sealingTwiceGivesDifferentBytes() {
        let plain = Data("the same".utf8)
        #expect(SealedFileCodec.seal(plain, key: key, path: "a") != SealedFileCodec.seal(plain, key: key, path: "a"))
    }

    /// A byte flipped anywhere (magic, nonce, a chunk, a tag), a file cut at a chunk boundary or anywhere, chunks
    /// swapped, a file read under another path or another key: each is refused as damaged, never returned.
    @Test func tamperingOfEveryKindIsRefused() throws {
        let plain = bytes(3 * Self.chunk + 10, seed: 1)
        let sealed = SealedFileCodec.seal(plain, key: key, path: "versions/A")
        func refused(_ data: Data, path: String = "versions/A", key: SecretKey? = nil, _ what: String) {
            #expect(throws: EncryptionError.self, "\(what)") {
                try SealedFileCodec.open(data, key: key ?? self.key, path: path, displayPath: path)
            }
        }
        for offset in [0, 7, 8, 23, 24, 100, SealedFileLayout.headerSize + Self.chunk + 3, sealed.count - 1] {
            var flipped = sealed
            flipped[offset] ^= 0x01
            refused(flipped, "a flipped byte at \(offset)")
        }
        let header = SealedFileLayout.headerSize, size = SealedFileLayout.sealedChunkSize
        refused(sealed.prefix(header + 3 * size), "the last chunk removed")
        refused(sealed.prefix(header + size), "all but the first chunk removed")
        refused(sealed.prefix(sealed.count - 1), "one byte cut")
        refused(sealed.prefix(header), "only the header")
        refused(Data(), "an empty file")
        var swapped = sealed.prefix(header)
        swapped.append(sealed[(header + size)..<(header + 2 * size)])
        swapped.append(sealed[header..<(header + size)])
        swapped.append(sealed[(header + 2 * size)...])
        refused(swapped, "the first two chunks swapped")
        refused(sealed, path: "versions/B", "the file read as another path's")
        refused(sealed, key: SecretKey.random(), "another key")
        refused(Data("{\"version\": {}}".utf8), "a plaintext file")
    }

    @Test func aDamagedFileOpenedInPlaceIsRemoved() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        var sealed = SealedFileCodec.seal(bytes(100 * Self.chunk, seed: 2), key: key, path: "changes/A")
        sealed[sealed.count - 5] ^= 0x80
        try sealed.write(to: folder.appendingPathComponent("sealed"))
        let damaged = folder.appendingPathComponent("sealed")
        #expect(throws: EncryptionError.self) {
            try SealedFileCodec.openInPlace(damaged, key: key, path: "changes/A", displayPath: "changes/A")
        }
        #expect(
            !FileManager.default.fileExists(atPath: damaged.path), "nothing half-opened is left where the caller looks")
    }
}

func temporaryFolder() throws -> URL {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
        "llvs-encryption-tests-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    return folder
}
