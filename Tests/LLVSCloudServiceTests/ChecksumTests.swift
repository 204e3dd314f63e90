import Foundation
import LLVS
import LLVSSupport
import Testing

@Suite struct ChecksumTests {
    /// Vectors from Microsoft's reference implementation as published with rclone's OneDrive backend:
    /// (input in base64, QuickXorHash in base64).
    static let quickXorVectors: [(String, String)] = [
        ("", "AAAAAAAAAAAAAAAAAAAAAAAAAAA="),
        ("Sg==", "SgAAAAAAAAAAAAAAAQAAAAAAAAA="),
        ("tbQ=", "taAFAAAAAAAAAAAAAgAAAAAAAAA="),
        ("0pZP", "0rDEEwAAAAAAAAAAAwAAAAAAAAA="),
        ("jRRDVA==", "jaDAEKgAAAAAAAAABAAAAAAAAAA="),
        ("eAV52qE=", "eChAHrQRCgAAAAAABQAAAAAAAAA="),
        ("luBZlaT6", "lgBHFipBCn0AAAAABgAAAAAAAAA="),
        ("qaApEj66lw==", "qQBFCiTgA11cAgAABwAAAAAAAAA="),
        ("/aNzzCFPS/A=", "/RjFHJgRgicsAR4ACAAAAAAAAAA="),
    ]

    @Test func quickXorHashMatchesTheReferenceVectors() throws {
        for (input, expected) in Self.quickXorVectors {
            let data = try #require(Data(base64Encoded: input))
            #expect(ChecksumAlgorithm.quickXor.text(of: data) == expected, "input \(input)")
        }
    }

    /// Past 20 bytes the 160-bit register wraps; a hash fed in odd pieces must equal the hash of the whole.
    @Test func everyAlgorithmGivesTheSameAnswerInPieces() {
        let data = SeededGenerator.bytes(1_000_003, seed: 42)
        for algorithm in ChecksumAlgorithm.allCases {
            let stream = ChecksumStream(algorithm)
            var offset = 0
            for size in [1, 7, 19, 20, 21, 160, 4096, 65_537] where offset < data.count {
                let end = min(data.count, offset + size)
                stream.update(data.subdata(in: offset..<end))
                offset = end
            }
            stream.update(data.subdata(in: offset..<data.count))
            #expect(stream.finalize() == algorithm.text(of: data), "\(algorithm)")
        }
    }

    /// Dropbox's content hash: the SHA-256 of the blocks' SHA-256s, a block being 4 MiB; nothing for an empty file.
    @Test func dropboxsContentHashIsTheHashOfItsBlocksHashes() {
        #expect(
            ChecksumAlgorithm.dropboxContentHash.text(of: Data())
                == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        let data = SeededGenerator.bytes(DropboxContentHash.blockSize + 1, seed: 12)
        let blocks = [data.prefix(DropboxContentHash.blockSize), data.suffix(1)].map {
            DigestStream(.sha256).finalizeAfter(Data($0))
        }
        let expected = DigestStream.hex(Data(blocks.joined()), .sha256)
        #expect(ChecksumAlgorithm.dropboxContentHash.text(of: data) == expected)
        let oneBlock = data.prefix(DropboxContentHash.blockSize)
        #expect(
            ChecksumAlgorithm.dropboxContentHash.text(of: Data(oneBlock))
                == DigestStream.hex(Data(DigestStream(.sha256).finalizeAfter(Data(oneBlock))), .sha256),
            "exactly one block: no empty block after it")
    }

    @Test func libcryptoDigestsAreTheStandardOnes() throws {
        let abc = Data("abc".utf8)
        #expect(ChecksumAlgorithm.sha1.text(of: abc) == "a9993e364706816aba3e25717850c26c9cd0d89d")
        #expect(ChecksumAlgorithm.md5.text(of: abc) == "900150983cd24fb0d6963f7d28e17f72")
        #expect(
            ChecksumAlgorithm.sha256.text(of: abc) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        )
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("llvs-checksum-\(UUID().uuidString)")
        try abc.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        #expect(try ChecksumStream.text(ofFileAt: file, .sha1) == "a9993e364706816aba3e25717850c26c9cd0d89d")
    }

    @Test func hexIsComparedWithoutCaseAndBase64Exactly() {
        #expect(ChecksumAlgorithm.sha1.matches("A9993E36", "a9993e36"))
        #expect(!ChecksumAlgorithm.quickXor.matches("SGAAAA==", "SgAAAA=="))
    }
}

extension DigestStream {
    fileprivate func finalizeAfter(_ data: Data) -> [UInt8] {
        update(data)
        return finalize()
    }
}
