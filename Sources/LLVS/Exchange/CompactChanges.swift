import Foundation
import LLVSSupport

/// The changes file of a compact remote (docs/remote-format.md, "Compact"): the changes a version made, in binary,
/// each new value's record as the sending store keeps it (compressed or not), so a value is compressed once, when it
/// is first saved, and moves between stores and remotes as those bytes.
///
///     "LLVSCHG1"
///     change*    kind:u8 id:string [preserve: storedVersionId:string]
///                [insert, update: encoding:u8 size:varint length:varint bytes[length]]
///                [releasedInsert, releasedUpdate: size:varint]
///     end        0:u8 count:varint crc32:u32   (the CRC-32 of every byte before it)
///
/// Strings are a varint length and UTF-8; `encoding` is `RecordEncoding`'s raw value; `size` is the value's size and
/// `length` the stored bytes'. The end and its checksum make a cut or damaged file an error, never fewer changes.
/// A released insert or update is a value whose bytes the sender's prune released (`ReleasedRecordList`): it keeps its
/// place and size in every map, and the receiver lists it as released too.
enum CompactChanges {
    static let magic = Data("LLVSCHG1".utf8)

    enum Kind: UInt8 {
        case end = 0, insert, update, remove, preserve, preserveRemoval, releasedInsert, releasedUpdate
    }

    /// Values whose stored bytes are larger than this go to a file on receipt (as in the upstream format).
    static let inlineLimit = Store.inlineValueLimit
}

extension Store {
    /// The changes a version made, in the compact format: in memory when their values are small, else written
    /// through `stager` (or to a plain temporary file) one value at a time, each copied from storage in pieces.
    /// They come with their index (`CompactChangesIndex`), made as they are written.
    func compactChanges(madeInVersionIdentifiedBy id: Version.ID, stager: FileStager?) throws -> EncodedChanges {
        let planned = try plannedChanges(madeInVersionIdentifiedBy: id)
        let total = planned.reduce(Int64(0)) { $0 + ($1.entry?.data.length ?? 0) }
        if total <= CompactChanges.inlineLimit {
            let sink = MemoryChangesSink()
            let index = try writeCompact(planned, to: sink)
            return .indexed(.data(sink.data), index: index)
        }
        let url = temporaryFile("send")
        let index: CompactChangesIndex
        do {
            let out = try (stager ?? .plain).makeWriter(url)
            index = try writeCompact(planned, to: StagedChangesSink(out))
            try out.finish()
        } catch {
            try? FileManager.default.removeItem(at: url)
            throw error
        }
        return .indexed(stager != nil ? .staged(url) : .file(url, owned: true), index: index)
    }

    private func writeCompact(
        _ planned: [PlannedChange], to sink: some CompactChangesSink
    ) throws -> CompactChangesIndex {
        let released = try releasedRecords()
        var crc = CRC32.Running()
        var written: Int64 = 0
        var entries: [CompactChangesIndex.Entry] = []
        entries.reserveCapacity(planned.count)
        func emit(_ bytes: Data) throws {
            crc.update(bytes)
            try sink.write(bytes)
            written += Int64(bytes.count)
        }
        try emit(CompactChanges.magic)
        for change in planned {
            var head = ByteWriter()
            switch change {
            case .insert(let entry), .update(let entry):
                if released.contains(entry.data) {
                    let kind: CompactChanges.Kind =
                        if case .insert = change { .releasedInsert } else { .releasedUpdate }
                    head.byte(kind.rawValue)
                    head.string(entry.valueId.rawValue)
                    head.varint(UInt64(entry.size))
                    entries.append(.released(id: entry.valueId, isUpdate: kind == .releasedUpdate, size: entry.size))
                    break
                }
                let kind: CompactChanges.Kind = if case .insert = change { .insert } else { .update }
                head.byte(kind.rawValue)
                head.string(entry.valueId.rawValue)
                var encoding: RecordEncoding?
                var valueOffset: Int64 = 0
                var valueCRC = CRC32.Running()
                var pieces: [Data] = []
                var buffered: Int64 = 0
                // The record's encoding is known with its first piece; pieces are held until the head is written,
                // except for a large record, whose head goes as soon as the first piece says the encoding.
                try storage.copyStoredRecord(at: entry.data, zone: .values) { pieceEncoding, piece in
                    if encoding == nil {
                        encoding = pieceEncoding
                        head.byte(pieceEncoding.rawValue)
                        head.varint(UInt64(entry.size))
                        head.varint(UInt64(entry.data.length))
                        try emit(Data(head.bytes))
                        valueOffset = written
                    }
                    valueCRC.update(piece)
                    buffered += Int64(piece.count)
                    pieces.append(piece)
                    if buffered >= 1 << 20 {
                        for piece in pieces { try emit(piece) }
                        pieces = []
                        buffered = 0
                    }
                }
                if encoding == nil {  // an empty record gives no piece
                    head.byte(RecordEncoding.plain.rawValue)
                    head.varint(0)
                    head.varint(0)
                    try emit(Data(head.bytes))
                    valueOffset = written
                }
                for piece in pieces { try emit(piece) }
                entries.append(
                    .value(
                        id: entry.valueId, isUpdate: kind == .update, encoding: encoding ?? .plain,
                        size: encoding == nil ? 0 : entry.size, offset: valueOffset,
                        length: encoding == nil ? 0 : entry.data.length, crc32: valueCRC.value))
                continue
            case .remove(let valueId):
                head.byte(CompactChanges.Kind.remove.rawValue)
                head.string(valueId.rawValue)
                entries.append(.remove(valueId))
            case .preserve(let reference):
                head.byte(CompactChanges.Kind.preserve.rawValue)
                head.string(reference.valueId.rawValue)
                head.string(reference.storedVersionId.rawValue)
                entries.append(.preserve(reference))
            case .preserveRemoval(let valueId):
                head.byte(CompactChanges.Kind.preserveRemoval.rawValue)
                head.string(valueId.rawValue)
                entries.append(.preserveRemoval(valueId))
            }
            try emit(Data(head.bytes))
        }
        var end = ByteWriter()
        end.byte(CompactChanges.Kind.end.rawValue)
        end.varint(UInt64(planned.count))
        try emit(Data(end.bytes))
        var checksum = ByteWriter()
        checksum.uint32(crc.value)
        try sink.write(Data(checksum.bytes))
        return CompactChangesIndex(changesSize: written + 4, entries: entries)
    }
}

/// Where compact changes are written.
protocol CompactChangesSink {
    func write(_ bytes: Data) throws
}

private final class MemoryChangesSink: CompactChangesSink {
    var data = Data()
    func write(_ bytes: Data) throws { data.append(bytes) }
}

private struct StagedChangesSink: CompactChangesSink {
    let writer: any StagedFileWriter
    init(_ writer: any StagedFileWriter) { self.writer = writer }
    func write(_ bytes: Data) throws { try writer.write(bytes) }
}
