import Foundation
import LLVSSupport

/// One upstream sub-node's value references (value ID to the version that stored it), kept as the bytes they were
/// read from: an import compares each version's copy of a bucket with its predecessor's, and a bucket holds many
/// values while a version changes few, so making a String of every ID and hashing it was most of the reading
/// thread's time. When every ID and version ID is plain ASCII without escapes (what LLVS writes for UUIDs and most
/// keys), equal bytes are equal strings and the comparison is a merge of two lists sorted by bytes; otherwise
/// (escapes, non-ASCII names, whose equal strings may differ in bytes) the references are compared as Strings.
struct UpstreamBucket {
    private let bytes: [UInt8]
    /// Where each entry's value ID and stored version ID lie in `bytes`, sorted by value ID bytes (plain buckets).
    private let ranges: [(id: Range<Int>, stored: Range<Int>)]
    /// The references as Strings, for a bucket that is not plain.
    private let strings: [Value.ID: Version.ID]?

    static let empty = UpstreamBucket(bytes: [], ranges: [], strings: nil)

    /// About how much memory the bucket holds, for bounding a cache of them.
    var byteCount: Int { bytes.count + ranges.count * 32 + (strings?.count ?? 0) * 128 }

    private init(bytes: [UInt8], ranges: [(id: Range<Int>, stored: Range<Int>)], strings: [Value.ID: Version.ID]?) {
        self.bytes = bytes
        self.ranges = ranges
        self.strings = strings
    }

    /// Reads a sub-node's JSON (what `UpstreamMapNodeParser` reads, with its checks); throws its failure, or
    /// `NotValues` for a node that lists nodes.
    init(json: Data) throws {
        var reader = JSONByteReader(bytes: [UInt8](json))
        var ranges: [(id: Range<Int>, stored: Range<Int>)] = []
        let plain = try reader.upstreamBucketRanges(into: &ranges)
        guard reader.isAtEnd() else { throw reader.fail("text follows the node") }
        if plain {
            let bytes = reader.bytes
            // Sorted and without repeats is what LLVS writes (ordered by key); anything else is sorted here.
            let inOrder = bytes.withUnsafeBufferPointer { buffer in
                zip(ranges, ranges.dropFirst()).allSatisfy { Self.compare(buffer, $0.id, buffer, $1.id) < 0 }
            }
            if !inOrder {
                bytes.withUnsafeBufferPointer { buffer in ranges.sort { Self.compare(buffer, $0.id, buffer, $1.id) < 0 }
                }
            }
            // A repeated ID (never written by LLVS) is left to the String comparison, which keeps the last.
            if !inOrder,
                bytes.withUnsafeBufferPointer({ buffer in
                    zip(ranges, ranges.dropFirst()).contains { Self.compare(buffer, $0.id, buffer, $1.id) == 0 }
                })
            {
                self.init(
                    bytes: bytes, ranges: [],
                    strings: try Self.strings(of: UpstreamMapNodeParser.parse(json, keepingKeyStrings: false)))
                return
            }
            self.init(bytes: bytes, ranges: ranges, strings: nil)
        } else {
            self.init(
                bytes: [], ranges: [],
                strings: try Self.strings(of: UpstreamMapNodeParser.parse(json, keepingKeyStrings: false)))
        }
    }

    struct NotValues: Error {}

    private static func strings(of node: UpstreamMapNode) throws -> [Value.ID: Version.ID] {
        guard case .values(let entries) = node.children else { throw NotValues() }
        return Dictionary(
            entries.map { ($0.valueReference.valueId, $0.valueReference.storedVersionId) },
            uniquingKeysWith: { _, last in last })
    }

    private var asStrings: [Value.ID: Version.ID] {
        strings
            ?? Dictionary(
                ranges.map {
                    (
                        Value.ID(String(decoding: bytes[$0.id], as: UTF8.self)),
                        Version.ID(String(decoding: bytes[$0.stored], as: UTF8.self))
                    )
                },
                uniquingKeysWith: { _, last in last })
    }

    /// What differs from `before` to `self`: each value whose stored version differs (with its new one, and whether
    /// `before` had it), sorted by ID, and the IDs `before` had that `self` lacks, sorted.
    func differences(
        from before: UpstreamBucket
    ) -> (changed: [(id: Value.ID, stored: Version.ID, existed: Bool)], removed: [Value.ID]) {
        guard strings == nil, before.strings == nil else { return Self.stringDifferences(asStrings, before.asStrings) }
        var changed: [(id: Value.ID, stored: Version.ID, existed: Bool)] = []
        var removed: [Value.ID] = []
        bytes.withUnsafeBufferPointer { new in
            before.bytes.withUnsafeBufferPointer { old in
                func string(_ range: Range<Int>, in bytes: UnsafeBufferPointer<UInt8>) -> String {
                    String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
                }
                var next = before.ranges.startIndex
                for entry in ranges {
                    var order = 1
                    while next < before.ranges.endIndex {
                        order = Self.compare(old, before.ranges[next].id, new, entry.id)
                        guard order < 0 else { break }
                        removed.append(Value.ID(string(before.ranges[next].id, in: old)))
                        next += 1
                    }
                    if next < before.ranges.endIndex, order == 0 {
                        if Self.compare(old, before.ranges[next].stored, new, entry.stored) != 0 {
                            changed.append(
                                (Value.ID(string(entry.id, in: new)), Version.ID(string(entry.stored, in: new)), true))
                        }
                        next += 1
                    } else {
                        changed.append(
                            (Value.ID(string(entry.id, in: new)), Version.ID(string(entry.stored, in: new)), false))
                    }
                }
                for rest in before.ranges[next...] { removed.append(Value.ID(string(rest.id, in: old))) }
            }
        }
        // Byte order and String order agree on ASCII, so both lists are sorted as the String comparison sorts them.
        return (changed, removed)
    }

    /// How the bytes of `a` at `ra` order against those of `b` at `rb` (negative, zero, positive), as
    /// `lexicographicallyPrecedes` orders them, by `memcmp`: this comparison runs for every entry of every bucket read.
    private static func compare(
        _ a: UnsafeBufferPointer<UInt8>, _ ra: Range<Int>, _ b: UnsafeBufferPointer<UInt8>, _ rb: Range<Int>
    ) -> Int {
        let common = min(ra.count, rb.count)
        if common > 0, let left = a.baseAddress, let right = b.baseAddress {
            let order = memcmp(left + ra.lowerBound, right + rb.lowerBound, common)
            if order != 0 { return Int(order) }
        }
        return ra.count - rb.count
    }

    private static func stringDifferences(
        _ after: [Value.ID: Version.ID], _ before: [Value.ID: Version.ID]
    )
        -> (changed: [(id: Value.ID, stored: Version.ID, existed: Bool)], removed: [Value.ID])
    {
        var changed: [(id: Value.ID, stored: Version.ID, existed: Bool)] = []
        var keptCount = 0
        for (id, stored) in after {
            let earlier = before[id]
            if earlier != nil { keptCount += 1 }
            if earlier != stored { changed.append((id, stored, earlier != nil)) }
        }
        changed.sort { $0.id < $1.id }
        // Some of the bucket's earlier values are gone only when fewer than all of them are still there.
        let removed = keptCount < before.count ? before.keys.filter { after[$0] == nil }.sorted() : []
        return (changed, removed)
    }
}

extension JSONByteReader {
    /// A sub-node's value entries as byte ranges; false (ranges incomplete) when an ID or version ID has an escape
    /// or a non-ASCII byte. Checks the node as `upstreamMapNode` does.
    fileprivate mutating func upstreamBucketRanges(
        into ranges: inout [(id: Range<Int>, stored: Range<Int>)]
    ) throws -> Bool {
        var plain = true
        var hasReference = false
        /// Which children member came last (the one a repeated or double `children` leaves, as the node parser).
        var listsValues: Bool?
        try object { reader, name in
            if name == "reference" {
                _ = try reader.nodeReference()
                hasReference = true
            } else if name == "children" {
                try reader.object { reader, name in
                    if name == "values" {
                        listsValues = true
                        ranges.removeAll()
                        try reader.array { reader in
                            if let entry = reader.canonicalValueEntry() {
                                ranges.append(entry)
                                return
                            }
                            var id: Range<Int>?, stored: Range<Int>?
                            try reader.object { reader, name in
                                if name == "valueReference" {
                                    try reader.object { reader, name in
                                        if name == "valueId" {
                                            id = try reader.plainStringRange(&plain)
                                        } else if name == "storedVersionId" {
                                            stored = try reader.plainStringRange(&plain)
                                        } else {
                                            try reader.skipValue()
                                        }
                                    }
                                } else {
                                    try reader.skipValue()
                                }
                            }
                            guard let id, let stored else {
                                throw reader.fail("a value entry lacks its valueId or storedVersionId")
                            }
                            ranges.append((id, stored))
                        }
                    } else if name == "nodes" {
                        listsValues = false
                        try reader.array { reader in _ = try reader.nodeReference() }
                    } else {
                        try reader.skipValue()
                    }
                }
            } else {
                try reader.skipValue()
            }
        }
        guard hasReference else { throw fail("the node has no reference") }
        guard let listsValues else { throw fail("the node has neither nodes nor values") }
        guard listsValues else { throw UpstreamBucket.NotValues() }
        return plain
    }

    /// A value entry exactly as LLVS writes it (`{"key":{"keyString":K},"valueReference":{"valueId":V,
    /// "storedVersionId":S}}`, no spaces, the three strings plain ASCII without escapes), matched in one pass: the
    /// ranges of V and S, the reader past the entry. Nil, the reader where it was, for anything else, which the member
    /// by member reading then takes. Every sub-node an import reads is a list of these, and matching them whole
    /// costs a fraction of reading them member by member.
    fileprivate mutating func canonicalValueEntry() -> (id: Range<Int>, stored: Range<Int>)? {
        let start = position
        func literal(_ text: StaticString) -> Bool {
            let count = text.utf8CodeUnitCount
            guard position + count <= bytes.count,
                bytes.withUnsafeBufferPointer({ buffer in
                    buffer.baseAddress.map { memcmp($0 + position, text.utf8Start, count) == 0 } ?? false
                })
            else { return false }
            position += count
            return true
        }
        /// A string without escapes or non-ASCII bytes, passed over; its bytes' range.
        func plainString() -> Range<Int>? {
            guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else { return nil }
            let end = plainRunEnd(from: position + 1)
            guard end < bytes.count, bytes[end] == UInt8(ascii: "\"") else { return nil }
            defer { position = end + 1 }
            return (position + 1)..<end
        }
        guard literal(#"{"key":{"keyString":"#), plainString() != nil,
            literal(#"},"valueReference":{"valueId":"#), let id = plainString(),
            literal(#","storedVersionId":"#), let stored = plainString(),
            literal("}}")
        else {
            position = start
            return nil
        }
        return (id, stored)
    }

    /// Passes over a string (checked as `skipString` checks it) and gives the range of its bytes between the quotes;
    /// clears `plain` when it holds an escape or a non-ASCII byte.
    private mutating func plainStringRange(_ plain: inout Bool) throws -> Range<Int> {
        skipWhitespace()
        let start = position + 1
        if try !skipString() { plain = false }
        return start..<(position - 1)
    }
}
