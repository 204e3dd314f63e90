import Foundation
import LLVSSupport

/// Where each value of a compact changes file lies in it, kept beside it on the remote as `indexes/<versionId>`
/// (docs/remote-format.md, "Indexes"), so a reader that wants a few values of a version (`llvs mount --from`) reads
/// their byte ranges instead of the whole file:
///
///     "LLVSIDX1"
///     changesSize:varint                       the size of the changes file it describes
///     entry*     kind:u8 id:string [preserve: storedVersionId:string]
///                [insert, update: encoding:u8 size:varint offset:varint length:varint crc32:u32]
///                [releasedInsert, releasedUpdate: size:varint]
///     end        0:u8 count:varint crc32:u32   (the CRC-32 of every byte before it)
///
/// The kinds are the changes file's own (`CompactChanges.Kind`); `offset` is where the value's stored bytes start in
/// the changes file, and the CRC-32 is that of the `length` stored bytes, so a reader of one value can tell a damaged
/// range without the whole file's checksum. An index describes one changes file: when the file's size is not `changesSize` (a prune by a build
/// that writes no index replaced it), a reader takes the changes file whole instead.
public struct CompactChangesIndex: Sendable, Equatable {
    public static let magic = Data("LLVSIDX1".utf8)
    /// The folder of a remote that holds the indexes, beside `versions/` and `changes/`.
    public static let folder = "indexes"

    /// One change of the version, with where its value's bytes are.
    public enum Entry: Sendable, Equatable {
        /// An insert (or, `isUpdate`, an update) whose stored bytes are `length` bytes at `offset`, with that CRC-32.
        case value(
            id: Value.ID, isUpdate: Bool, encoding: RecordEncoding, size: Int64, offset: Int64, length: Int64,
            crc32: UInt32)
        /// An insert or update whose bytes the sender's prune released: only its size is known.
        case released(id: Value.ID, isUpdate: Bool, size: Int64)
        case remove(Value.ID)
        case preserve(Value.Reference)
        case preserveRemoval(Value.ID)

        /// The change of an entry without data (remove, preserve, preserveRemoval); nil for a value's.
        public var changeWithoutData: Value.Change? {
            switch self {
            case .value, .released: nil
            case .remove(let id): .remove(id)
            case .preserve(let reference): .preserve(reference)
            case .preserveRemoval(let id): .preserveRemoval(id)
            }
        }
    }

    /// The size of the changes file described.
    public var changesSize: Int64
    public var entries: [Entry]

    public init(changesSize: Int64, entries: [Entry]) {
        self.changesSize = changesSize
        self.entries = entries
    }

    public func encoded() -> Data {
        var out = ByteWriter()
        out.append(Self.magic)
        out.varint(UInt64(changesSize))
        for entry in entries {
            switch entry {
            case .value(let id, let isUpdate, let encoding, let size, let offset, let length, let crc32):
                out.byte((isUpdate ? CompactChanges.Kind.update : .insert).rawValue)
                out.string(id.rawValue)
                out.byte(encoding.rawValue)
                out.varint(UInt64(size))
                out.varint(UInt64(offset))
                out.varint(UInt64(length))
                out.uint32(crc32)
            case .released(let id, let isUpdate, let size):
                out.byte((isUpdate ? CompactChanges.Kind.releasedUpdate : .releasedInsert).rawValue)
                out.string(id.rawValue)
                out.varint(UInt64(size))
            case .remove(let id):
                out.byte(CompactChanges.Kind.remove.rawValue)
                out.string(id.rawValue)
            case .preserveRemoval(let id):
                out.byte(CompactChanges.Kind.preserveRemoval.rawValue)
                out.string(id.rawValue)
            case .preserve(let reference):
                out.byte(CompactChanges.Kind.preserve.rawValue)
                out.string(reference.valueId.rawValue)
                out.string(reference.storedVersionId.rawValue)
            }
        }
        out.byte(CompactChanges.Kind.end.rawValue)
        out.varint(UInt64(entries.count))
        ChecksummedBytes.seal(&out)
        return Data(out.bytes)
    }

    /// Reads an index; `path` names it in errors. Every range must lie inside the changes file it describes.
    /// - Throws: `ExchangeError.malformedFile(path:reason:)`.
    public static func decode(_ data: Data, path: String) throws -> CompactChangesIndex {
        func fail(_ reason: String) -> ExchangeError { .malformedFile(path: path, reason: reason) }
        var reader = try ChecksummedBytes.body(of: data, magic: magic, what: "an index of compact changes", path: path)
        do {
            let changesSize = Int64(try reader.int(limit: Int.max))
            var entries: [Entry] = []
            while true {
                let kindByte = try reader.byte()
                guard let kind = CompactChanges.Kind(rawValue: kindByte) else {
                    throw fail("entry \(entries.count + 1) has unknown kind \(kindByte)")
                }
                if kind == .end { break }
                let id = Value.ID(try reader.string())
                switch kind {
                case .end: break
                case .insert, .update:
                    let encodingByte = try reader.byte()
                    guard let encoding = RecordEncoding(rawValue: encodingByte) else {
                        throw fail("value \(id) has unknown encoding \(encodingByte)")
                    }
                    let size = Int64(try reader.int(limit: Int(UInt32.max)))
                    let offset = Int64(try reader.int(limit: Int.max))
                    let length = Int64(try reader.int(limit: Int(UInt32.max)))
                    let crc32 = try reader.uint32()
                    guard offset <= changesSize, length <= changesSize - offset else {
                        throw fail("value \(id) lies past the end of its changes file (\(changesSize) bytes)")
                    }
                    entries.append(
                        .value(
                            id: id, isUpdate: kind == .update, encoding: encoding, size: size, offset: offset,
                            length: length, crc32: crc32))
                case .releasedInsert, .releasedUpdate:
                    let size = Int64(try reader.int(limit: Int(UInt32.max)))
                    entries.append(.released(id: id, isUpdate: kind == .releasedUpdate, size: size))
                case .remove: entries.append(.remove(id))
                case .preserveRemoval: entries.append(.preserveRemoval(id))
                case .preserve:
                    let stored = Version.ID(try reader.string())
                    entries.append(.preserve(Value.Reference(valueId: id, storedVersionId: stored)))
                }
            }
            let count = try reader.int(limit: Int.max)
            guard count == entries.count else { throw fail("it ends saying \(count) entries after \(entries.count)") }
            guard reader.isAtEnd else { throw fail("bytes after its end") }
            return CompactChangesIndex(changesSize: changesSize, entries: entries)
        } catch let failure as ByteReader.Failure {
            throw fail(failure.description)
        }
    }
}

extension CompactChangesIndex {
    /// How this index fails to describe `changes` (the changes file it names): its size, and each entry against the
    /// index the file itself gives (`CompactChangesReader.index`). Empty when it describes the file exactly.
    public func mismatches(with changes: EncodedChanges, path: String) throws -> [String] {
        let actual = try CompactChangesReader.index(of: changes, path: path)
        guard actual.changesSize == changesSize else {
            return ["its index describes a changes file of \(changesSize) bytes, but it has \(actual.changesSize)"]
        }
        guard actual.entries.count == entries.count else {
            return ["its index has \(entries.count) entries for \(actual.entries.count) changes"]
        }
        return zip(entries, actual.entries).enumerated().compactMap { number, pair in
            pair.0 == pair.1 ? nil : "its index entry \(number + 1) does not describe the change there (\(pair.1))"
        }
    }
}
