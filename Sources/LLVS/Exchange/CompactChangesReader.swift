import Foundation
import LLVSSupport

/// Reads a compact changes file (`CompactChanges`) as a stream: small values stay in memory, a value whose stored
/// bytes pass the inline limit goes to a temporary file in `temporaryDirectory`, so a version of any size is received
/// in bounded memory. Every length is checked against what is left and the whole against its CRC-32.
public enum CompactChangesReader {
    static func read(_ encoded: EncodedChanges, path: String, temporaryDirectory: URL) throws -> ReceivedChanges {
        let input: CompactInput
        switch encoded {
        case .data(let data): input = CompactInput(data: data)
        case .file(let url, _): input = try CompactInput(file: ReadableFile(path: url.path))
        case .staged(let url): throw ExchangeError.stagedChangesNotReadable(path: url.path)
        case .indexed(let changes, _): return try read(changes, path: path, temporaryDirectory: temporaryDirectory)
        }
        var received = ReceivedChanges(changes: [])
        do {
            try read(input, into: &received, temporaryDirectory: temporaryDirectory)
        } catch let failure as ByteReader.Failure {
            received.discard()
            throw ExchangeError.malformedFile(path: path, reason: failure.description)
        } catch {
            received.discard()
            throw error
        }
        return received
    }

    private static func read(
        _ input: CompactInput, into received: inout ReceivedChanges, temporaryDirectory: URL
    ) throws {
        try walk(input) { entry in
            switch entry {
            case .remove(let id): received.changes.append(.remove(id))
            case .preserveRemoval(let id): received.changes.append(.preserveRemoval(id))
            case .preserve(let reference): received.changes.append(.preserve(reference))
            case .released(let id, let isUpdate, let size):
                received.stored.append(
                    ReceivedValue(id: id, isUpdate: isUpdate, size: size, encoding: .plain, bytes: .released))
            case .value(let id, let isUpdate, let encoding, let size, _, let length, _):
                let bytes: ReceivedValue.Bytes
                if length <= CompactChanges.inlineLimit {
                    bytes = .data(try input.bytes(Int(length)))
                } else {
                    let url = temporaryDirectory.appendingPathComponent("received-" + UUID.drawn().uuidString)
                    try input.copy(length, to: url)
                    bytes = .file(url)
                }
                received.stored.append(
                    ReceivedValue(id: id, isUpdate: isUpdate, size: size, encoding: encoding, bytes: bytes))
            }
        }
    }

    /// Walks a compact changes file: each change goes to `change` as an index entry (a value's with its offset and
    /// length, and a CRC-32 of 0), and `change` consumes a value's `length` bytes from `input`; then the end, the count
    /// and the file's checksum are checked. Returns the file's size.
    @discardableResult
    private static func walk(
        _ input: CompactInput, _ change: (CompactChangesIndex.Entry) throws -> Void
    ) throws -> Int64 {
        func fail(_ reason: String) -> ByteReader.Failure { ByteReader.Failure(description: reason) }
        guard try input.bytes(CompactChanges.magic.count) == CompactChanges.magic else {
            throw fail("it is not a compact changes file (no LLVSCHG1 at its start)")
        }
        var count = 0
        while true {
            let kindByte = try input.byte()
            guard let kind = CompactChanges.Kind(rawValue: kindByte) else {
                throw fail("change \(count + 1) has unknown kind \(kindByte)")
            }
            if kind == .end { break }
            count += 1
            let id = Value.ID(try input.string())
            switch kind {
            case .end: break
            case .remove: try change(.remove(id))
            case .preserveRemoval: try change(.preserveRemoval(id))
            case .preserve:
                let stored = Version.ID(try input.string())
                try change(.preserve(Value.Reference(valueId: id, storedVersionId: stored)))
            case .releasedInsert, .releasedUpdate:
                let size = Int64(try input.varint(limit: UInt64(UInt32.max)))
                try change(.released(id: id, isUpdate: kind == .releasedUpdate, size: size))
            case .insert, .update:
                let encodingByte = try input.byte()
                guard let encoding = RecordEncoding(rawValue: encodingByte) else {
                    throw fail("value \(id) has unknown encoding \(encodingByte)")
                }
                let size = Int64(try input.varint(limit: UInt64(UInt32.max)))
                let length = Int64(try input.varint(limit: UInt64(UInt32.max)))
                let offset = input.offset
                try change(
                    .value(
                        id: id, isUpdate: kind == .update, encoding: encoding, size: size, offset: offset,
                        length: length, crc32: 0))
                guard input.offset == offset + length else {
                    throw fail("value \(id) was not read whole")  // a reader's slip, never the file's
                }
            }
        }
        let declared = try input.varint(limit: UInt64(Int.max))
        guard declared == UInt64(count) else { throw fail("it ends saying \(declared) changes after \(count)") }
        let expected = input.checksum
        var trailer = ByteReader(try input.bytes(4))
        guard try trailer.uint32() == expected else { throw fail("checksum mismatch") }
        guard input.isAtEnd else { throw fail("bytes after its end") }
        return input.offset
    }
}

extension CompactChangesReader {
    /// The index of a compact changes file (`CompactChangesIndex`), from the file itself: each change in order, each
    /// value's range and its CRC-32, the file's size. The file is checked as `read` checks it.
    /// - Throws: `ExchangeError.malformedFile(path:reason:)`.
    public static func index(of encoded: EncodedChanges, path: String) throws -> CompactChangesIndex {
        let input: CompactInput
        switch encoded {
        case .data(let data): input = CompactInput(data: data)
        case .file(let url, _): input = try CompactInput(file: ReadableFile(path: url.path))
        case .staged(let url): throw ExchangeError.stagedChangesNotReadable(path: url.path)
        case .indexed(let changes, _): return try index(of: changes, path: path)
        }
        do {
            var entries: [CompactChangesIndex.Entry] = []
            let size = try walk(input) { entry in
                guard case .value(let id, let isUpdate, let encoding, let size, let offset, let length, _) = entry
                else {
                    entries.append(entry)
                    return
                }
                var crc = CRC32.Running()
                var left = length
                while left > 0 {
                    let piece = try input.bytes(Int(min(left, 1 << 20)))
                    crc.update(piece)
                    left -= Int64(piece.count)
                }
                entries.append(
                    .value(
                        id: id, isUpdate: isUpdate, encoding: encoding, size: size, offset: offset, length: length,
                        crc32: crc.value))
            }
            return CompactChangesIndex(changesSize: size, entries: entries)
        } catch let failure as ByteReader.Failure {
            throw ExchangeError.malformedFile(path: path, reason: failure.description)
        }
    }
}

/// Bytes read from memory or a file through a 1 MiB buffer, with the CRC-32 of everything consumed.
private final class CompactInput {
    private let file: ReadableFile?
    private var buffer: Data
    private var position = 0
    /// Where in the file the buffer starts.
    private var bufferStart: Int64 = 0
    private let size: Int64
    private var crc = CRC32.Running()

    init(data: Data) {
        file = nil
        buffer = data
        size = Int64(data.count)
    }

    init(file: ReadableFile) {
        self.file = file
        buffer = Data()
        size = file.size
    }

    var checksum: UInt32 { crc.value }
    var isAtEnd: Bool { bufferStart + Int64(position) == size }
    /// How many bytes were consumed: where the next one is in the file.
    var offset: Int64 { bufferStart + Int64(position) }
    private var remaining: Int64 { size - bufferStart - Int64(position) }

    /// Makes at least `count` bytes (no more than what is left) available in the buffer.
    private func fill(_ count: Int) throws {
        guard buffer.count - position < count, let file else { return }
        let start = bufferStart + Int64(position)
        let want = Int(min(max(Int64(count), 1 << 20), size - start))
        buffer = try file.read(at: start, count: want)
        bufferStart = start
        position = 0
    }

    func bytes(_ count: Int) throws -> Data {
        guard Int64(count) <= remaining else {
            throw ByteReader.Failure(description: "\(count) bytes run past the end of the file")
        }
        try fill(count)
        let start = buffer.startIndex + position
        let slice = buffer[start..<start + count]
        position += count
        crc.update(slice)
        return Data(slice)
    }

    func byte() throws -> UInt8 { try bytes(1).first! }

    func varint(limit: UInt64) throws -> UInt64 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let byte = try byte()
            guard shift < 64 else { throw ByteReader.Failure(description: "a number runs too long") }
            value |= UInt64(byte & 0x7f) << shift
            if byte & 0x80 == 0 { break }
            shift += 7
        }
        guard value <= limit else { throw ByteReader.Failure(description: "number \(value) out of range") }
        return value
    }

    func string() throws -> String {
        let count = Int(try varint(limit: 1 << 20))
        guard let text = String(data: try bytes(count), encoding: .utf8) else {
            throw ByteReader.Failure(description: "a name is not UTF-8")
        }
        return text
    }

    /// Copies the next `count` bytes to a new file at `url`, a MiB at a time.
    func copy(_ count: Int64, to url: URL) throws {
        guard count <= remaining else {
            throw ByteReader.Failure(description: "a value of \(count) bytes runs past the end of the file")
        }
        let writer = try AtomicFileWriter(destination: url.path)
        do {
            var left = count
            while left > 0 {
                let piece = try bytes(Int(min(left, 1 << 20)))
                try writer.write(piece)
                left -= Int64(piece.count)
            }
            try writer.commit(durable: false)
        } catch {
            writer.discard()
            throw error
        }
    }
}
