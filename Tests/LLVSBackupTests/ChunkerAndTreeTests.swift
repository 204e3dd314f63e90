import Foundation
import LLVS
import Testing
@testable import LLVSBackup

/// Deterministic bytes: the same seed gives the same data on every machine.
func pseudoRandomData(count: Int, seed: UInt64) -> Data {
    var state = seed
    var data = Data(count: count)
    data.withUnsafeMutableBytes { raw in
        let words = raw.bindMemory(to: UInt64.self)
        for index in words.indices {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            words[index] = z ^ (z >> 31)
        }
    }
    return data
}

/// Cuts data as a backup does, through a pipe-less file descriptor.
func chunks(of data: Data) throws -> [Data] {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("chunker-\(UUID().uuidString)").path
    try data.write(to: URL(fileURLWithPath: path))
    defer { unlink(path) }
    let fd = open(path, O_RDONLY)
    defer { close(fd) }
    var result: [Data] = []
    try ContentDefinedChunker().chunks(ofDescriptor: fd) { result.append(Data($0)) }
    return result
}

@Suite struct ChunkerTests {
    @Test func chunksJoinToTheFileAndKeepTheirBounds() throws {
        let data = pseudoRandomData(count: 20 << 20 + 12345, seed: 1)
        let pieces = try chunks(of: data)
        #expect(pieces.reduce(Data(), +) == data)
        for piece in pieces.dropLast() {
            #expect(piece.count >= ContentDefinedChunker.minimumSize)
            #expect(piece.count <= ContentDefinedChunker.maximumSize)
        }
        // Around the average: 20 MiB of random bytes in roughly 10 to 30 chunks.
        #expect((8...40).contains(pieces.count), "\(pieces.count) chunks")
    }

    @Test func aSmallFileIsOneChunkAndAnEmptyOneNone() throws {
        #expect(try chunks(of: Data("hello".utf8)) == [Data("hello".utf8)])
        #expect(try chunks(of: Data()).isEmpty)
    }

    @Test func anEditChangesOnlyTheChunksAroundIt() throws {
        var data = pseudoRandomData(count: 20 << 20, seed: 2)
        let before = Set(try chunks(of: data).map { ContentHash(of: $0) })
        data[10 << 20] ^= 0xFF
        let afterPieces = try chunks(of: data)
        let new = afterPieces.filter { !before.contains(ContentHash(of: $0)) }
        #expect(new.count <= 2, "\(new.count) chunks changed")
        #expect(new.reduce(0) { $0 + $1.count } <= 4 << 20)
        // An insertion shifts everything after it, and the cut points follow the content.
        data.insert(contentsOf: [1, 2, 3], at: 5 << 20)
        let shifted = try chunks(of: data).filter { !before.contains(ContentHash(of: $0)) }
        #expect(shifted.count <= 3, "\(shifted.count) chunks changed after an insertion")
    }

    /// The cut points as docs/backup-format.md defines them, written from that text alone (not from the chunker):
    /// a gear table of SplitMix64 words seeded with "LLVSCDC1", cuts from the 512 KiB mark where the top 22 bits of
    /// the hash are zero below 1 MiB and the top 18 from there, at most 4 MiB.
    static func referenceChunkSizes(of data: Data) -> [Int] {
        var state: UInt64 = 0x4C4C_5653_4344_4331
        var gear: [UInt64] = []
        for _ in 0..<256 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            gear.append(z ^ (z >> 31))
        }
        let bytes = [UInt8](data)
        var sizes: [Int] = []
        var start = 0
        while start < bytes.count {
            let rest = bytes.count - start
            guard rest > 512 << 10 else { sizes.append(rest); break }
            var hash: UInt64 = 0, size = min(rest, 4 << 20)
            for offset in (512 << 10)..<min(rest, 4 << 20) {
                hash = (hash << 1) &+ gear[Int(bytes[start + offset])]
                let topBits = offset + 1 <= 1 << 20 ? 22 : 18
                if hash >> (64 - topBits) == 0 { size = offset + 1; break }
            }
            sizes.append(size)
            start += size
        }
        return sizes
    }

    /// The gear table and masks are part of the stored format: a seeded input must cut where the format says, and
    /// where it always has (the sizes below were cut by the format's first build), or stores stop sharing chunks.
    @Test func theCutPointsAreFixedByTheFormat() throws {
        let data = pseudoRandomData(count: 12 << 20, seed: 3)
        let sizes = try chunks(of: data).map(\.count)
        #expect(sizes == Self.referenceChunkSizes(of: data))
        #expect(sizes == Self.pinnedSizes, "\(sizes)")
    }

    static let pinnedSizes = [
        1_164_100, 1_088_484, 1_083_499, 1_358_339, 1_068_832, 1_313_519, 1_063_202, 838_249, 1_153_859, 1_355_871,
        1_094_958,
    ]
}

@Suite struct BackupTreeTests {
    func entry(
        _ name: String, _ content: BackupTreeEntry.Content, kind: BackupTreeEntry.Kind = .file
    ) -> BackupTreeEntry {
        BackupTreeEntry(
            name: Array(name.utf8), kind: kind, mode: 0o644, size: 3, modified: -5, modifiedNanoseconds: 999_999_999,
            content: content)
    }

    @Test func aListingRoundTripsExactly() throws {
        let tree = BackupTree(entries: [
            entry("b", .chunks([ContentHash(of: Data("x".utf8)), ContentHash(of: Data("y".utf8))])),
            entry("c", .tree(ContentHash(of: Data())), kind: .directory),
            entry("d", .link(target: Array("../elsewhere".utf8)), kind: .symlink),
            BackupTreeEntry(
                name: [0xff, 0x41], kind: .file, mode: 0o4755, size: 3, modified: 1, modifiedNanoseconds: 2,
                content: .embedded(Data("abc".utf8))),
        ])
        let decoded = try BackupTree(decoding: tree.encoded(), id: "t")
        #expect(decoded == tree)
        #expect(decoded.entry(named: Array("c".utf8))?.kind == .directory)
        #expect(decoded.entry(named: Array("cc".utf8)) == nil)
    }

    @Test(arguments: ["..", ".", "a/b", "a\0b", ""])
    func aNameThatLeavesItsFolderIsRefused(_ name: String) throws {
        let data = BackupTree(entries: [entry(name, .embedded(Data("abc".utf8)))]).encoded()
        #expect(throws: BackupError.self) { try BackupTree(decoding: data, id: "t") }
    }

    @Test func repeatedOrUnsortedNamesAreRefused() throws {
        for names in [["a", "a"], ["b", "a"]] {
            let data = BackupTree(entries: names.map { entry($0, .embedded(Data("abc".utf8))) }).encoded()
            #expect(throws: BackupError.self) { try BackupTree(decoding: data, id: "t") }
        }
    }

    /// Owners and attributes move a listing to format 3; one without them (an earlier backup's) stays in format 1,
    /// byte for byte, so its hash does not change.
    @Test func extendedAttributesRoundTripInFormatThreeAndOnlyThere() throws {
        let plain = BackupTree(entries: [entry("a", .embedded(Data("abc".utf8)))])
        #expect(plain.encoded()[8] == 1)
        var withAttributes = entry("b", .embedded(Data("abc".utf8)))
        withAttributes.extendedAttributes = [
            ExtendedAttribute(name: Array("system.posix_acl_access".utf8), value: Data([2, 0, 0, 0, 1, 0, 6, 0])),
            ExtendedAttribute(name: Array("user.color".utf8), value: Data([0, 255])),
        ]
        withAttributes.ownership = BackupTreeEntry.Ownership(user: 1000, group: .max)
        let tree = BackupTree(entries: plain.entries + [withAttributes])
        let data = tree.encoded()
        #expect(data[8] == 3)
        #expect(try BackupTree(decoding: data, id: "t") == tree)
        for length in 0..<data.count {
            #expect(throws: BackupError.self) { try BackupTree(decoding: data.prefix(length), id: "t") }
        }
        // Names out of order (or twice) are a damaged listing.
        var repeated = withAttributes
        repeated.extendedAttributes.reverse()
        #expect(throws: BackupError.self) {
            try BackupTree(decoding: BackupTree(entries: [repeated]).encoded(), id: "t")
        }
    }

    @Test func everyTruncationIsAnErrorNotACrash() throws {
        let data = BackupTree(entries: [
            entry("a", .chunks([ContentHash(of: Data())])), entry("b", .link(target: [1]), kind: .symlink),
        ]).encoded()
        for length in 0..<data.count {
            #expect(throws: BackupError.self) { try BackupTree(decoding: data.prefix(length), id: "t") }
        }
    }
}
