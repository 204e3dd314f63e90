import Foundation
import LLVSCodecs
import LLVSSupport

/// One value in a version's map: its key, and where its data is, in the version that stored it (value data always
/// lives there, so the location's version is the stored version: one string per entry fewer to copy, retain and
/// release each time a save rewrites a leaf).
struct MapEntry: Hashable, Sendable {
    var valueId: Value.ID
    var data: RecordLocation
    /// How many bytes the value holds: `data.length` for a plain record, more for a compressed one.
    var size: Int64

    var storedVersionId: Version.ID { data.versionId }

    var reference: Value.Reference { Value.Reference(valueId: valueId, storedVersionId: storedVersionId) }
}

/// A node of the persistent hash trie that maps value IDs to entries for one version.
///
/// Keys are placed by the SHA-256 of the value ID, one hex digit (16 ways) per level, so the trie stays
/// balanced whatever the IDs look like, and a save rewrites only the nodes on the paths of the values it
/// changes: O(changes × log N). A leaf holds up to `leafCapacity` entries before it splits.
enum MapNode: Sendable {
    case leaf([MapEntry])
    case branch([RecordLocation?])

    static let fanOut = 16
    static let leafCapacity = 32
    /// SHA-256 has 64 hex digits; below that, entries with equal digests share one leaf.
    static let maximumDepth = 64
}

/// The position of a value ID in the trie.
struct MapKey: Sendable {
    /// The ID in its canonical spelling.
    let valueId: Value.ID
    let digest: [UInt8]
    /// For a key of an earlier build's placement (`legacy(_:spelling:)`): only an entry of exactly this spelling is
    /// meant, never one that is merely equal.
    let exactSpelling: String?

    /// Where `valueId` goes: by the hash of its canonical spelling.
    init(_ valueId: Value.ID) {
        self.valueId = valueId.canonical
        self.digest = SHA256.digest(self.valueId.rawValue)
        exactSpelling = nil
    }

    private init(valueId: Value.ID, spelling: String) {
        self.valueId = valueId
        digest = SHA256.digest(spelling)
        exactSpelling = spelling
    }

    /// Where an earlier build placed `valueId` when it was given as `spelling`: the hash of those bytes.
    static func legacy(_ valueId: Value.ID, spelling: String) -> MapKey { MapKey(valueId: valueId, spelling: spelling) }

    /// Whether `entry` is the one this key means.
    func matches(_ entry: MapEntry) -> Bool {
        if let exactSpelling { entry.valueId.isSpelled(as: exactSpelling) } else { entry.valueId == valueId }
    }

    /// Where in a leaf the entry this key means is, in one pass: for a key of the canonical spelling, an entry spelled
    /// canonically is taken before one that is only equal (a leaf an earlier build wrote can hold both).
    func index(in entries: [MapEntry]) -> Int? {
        guard exactSpelling == nil else { return entries.firstIndex(where: matches) }
        var equal: Int?
        for (index, entry) in entries.enumerated() where entry.valueId == valueId {
            if entry.valueId.isSpelled(as: valueId.rawValue) { return index }
            if equal == nil { equal = index }
        }
        return equal
    }

    /// The child slot at `depth` (one hex digit of the digest).
    func slot(atDepth depth: Int) -> Int {
        let byte = digest[depth / 2]
        return Int(depth % 2 == 0 ? byte >> 4 : byte & 0x0f)
    }
}

extension MapNode {
    /// Compact binary form: a tag, then leaf entries or a 16-bit child bitmap with one location per child.
    /// Data locations are not written with a version ID: value data always lives in the version that stored it.
    /// A leaf is tag 2: each entry ends with how much larger the value is than its record (0 unless compressed).
    /// Tag 0, a leaf without that, is what builds before compression wrote; it is read, never written.
    func encoded() -> Data {
        var writer = ByteWriter(capacity: encodedSize)
        switch self {
        case .leaf(let entries):
            writer.byte(2)
            writer.varint(UInt64(entries.count))
            for entry in entries {
                writer.string(entry.valueId.rawValue)
                writer.string(entry.storedVersionId.rawValue)
                writer.varint(UInt64(entry.data.offset))
                writer.varint(UInt64(entry.data.length))
                writer.varint(UInt64(entry.size - entry.data.length))
            }
        case .branch(let children):
            writer.byte(1)
            var bitmap: UInt16 = 0
            for (slot, child) in children.enumerated() where child != nil { bitmap |= 1 << UInt16(slot) }
            writer.uint16(bitmap)
            for child in children {
                guard let child else { continue }
                writer.string(child.versionId.rawValue)
                writer.varint(UInt64(child.offset))
                writer.varint(UInt64(child.length))
            }
        }
        return Data(writer.bytes)
    }

    /// The size of `encoded()`, worked out first so the encoding is written into one buffer of its size: a save
    /// writes a node per level of each changed path, and an import writes them for every version.
    private var encodedSize: Int {
        switch self {
        case .leaf(let entries):
            entries.reduce(1 + ByteWriter.varintSize(UInt64(entries.count))) { size, entry in
                size + ByteWriter.stringSize(entry.valueId.rawValue)
                    + ByteWriter.stringSize(entry.storedVersionId.rawValue)
                    + ByteWriter.varintSize(UInt64(entry.data.offset))
                    + ByteWriter.varintSize(UInt64(entry.data.length))
                    + ByteWriter.varintSize(UInt64(entry.size - entry.data.length))
            }
        case .branch(let children):
            children.reduce(3) { size, child in
                guard let child else { return size }
                return size + ByteWriter.stringSize(child.versionId.rawValue)
                    + ByteWriter.varintSize(UInt64(child.offset))
                    + ByteWriter.varintSize(UInt64(child.length))
            }
        }
    }

    init(decoding data: Data) throws {
        var reader = ByteReader(data)
        var versions = RepeatedVersionIDs()
        switch try reader.byte() {
        case let tag where tag == 0 || tag == 2:
            let count = try reader.int(limit: data.count)
            var entries: [MapEntry] = []
            entries.reserveCapacity(count)
            for _ in 0..<count {
                let valueId = Value.ID(try reader.string())
                let stored = try versions.read(from: &reader)
                let offset = Int64(try reader.int(limit: Int.max))
                let length = Int64(try reader.int(limit: Int.max))
                let extra = tag == 2 ? Int64(try reader.int(limit: Int(Zstd.largestValue))) : 0
                entries.append(
                    MapEntry(
                        valueId: valueId, data: RecordLocation(versionId: stored, offset: offset, length: length),
                        size: length + extra))
            }
            self = .leaf(entries)
        case 1:
            let bitmap = try reader.uint16()
            var children = [RecordLocation?](repeating: nil, count: MapNode.fanOut)
            for slot in 0..<MapNode.fanOut where bitmap & (1 << UInt16(slot)) != 0 {
                let version = try versions.read(from: &reader)
                let offset = Int64(try reader.int(limit: Int.max))
                let length = Int64(try reader.int(limit: Int.max))
                children[slot] = RecordLocation(versionId: version, offset: offset, length: length)
            }
            self = .branch(children)
        case let tag:
            throw ByteReader.Failure(description: "unknown map node kind \(tag)")
        }
        guard reader.isAtEnd else { throw ByteReader.Failure(description: "extra bytes after a map node") }
    }
}

/// The version IDs of one node: a leaf's entries and a branch's children name a few versions many times, so each
/// spelling is checked and made into a string once per node, not once per entry.
private struct RepeatedVersionIDs {
    private var seen: [(bytes: ArraySlice<UInt8>, id: Version.ID)] = []

    mutating func read(from reader: inout ByteReader) throws -> Version.ID {
        let count = try reader.int()
        let start = reader.position
        let bytes = try reader.raw(count)
        for entry in seen where entry.bytes == bytes { return entry.id }
        guard let string = String(validating: bytes, as: UTF8.self) else {
            throw ByteReader.Failure(description: "invalid UTF-8 at byte \(start)")
        }
        let id = Version.ID(string)
        if seen.count < 8 { seen.append((bytes, id)) }
        return id
    }
}
