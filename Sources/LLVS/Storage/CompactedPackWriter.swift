import Foundation
import LLVSCodecs
import LLVSSupport

/// Writes a compacted pack (`CompactedPackDirectory`): value records as they come, map nodes remembered by where they
/// are and written last, sorted by the place in the trie of their first entry, in zstd frames.
struct CompactedPackWriter {
    private struct Node {
        var key: UInt64
        var version: Int
        var record: Int
        var location: RecordLocation
        var crc32: UInt32
        var encoding: RecordEncoding
    }

    let output: AtomicFileWriter
    private var position: Int64 = 0
    private var versions: [CompactedPackDirectory.Version] = []
    private var nodes: [Node] = []
    private var frames: [CompactedPackDirectory.Frame] = []

    init(output: AtomicFileWriter) { self.output = output }

    mutating func start() throws {
        try output.write(CompactedPackDirectory.magic)
        position = Int64(CompactedPackDirectory.magic.count)
    }

    mutating func beginVersion(_ header: StoredVersion, recordsLength: Int64) {
        versions.append(CompactedPackDirectory.Version(header: header, bundleLength: recordsLength, records: []))
    }

    private mutating func add(
        _ offset: Int64, _ length: Int64, _ zone: StorageZone, _ placement: CompactedPackDirectory.Placement
    ) {
        versions[versions.count - 1].records.append(
            CompactedPackDirectory.Record(offset: offset, length: length, zone: zone, placement: placement))
    }

    mutating func addReleased(_ offset: Int64, length: Int64, zone: StorageZone) {
        add(offset, length, zone, .released)
    }

    /// Copies a value record, frame and all, from `file` at `start`.
    mutating func copyValue(_ offset: Int64, length: Int64, from file: ReadableFile, at start: Int64) throws {
        let framedLength = Int64(RecordFraming.recordHeaderSize) + length
        var done: Int64 = 0
        while done < framedLength {
            let piece = try file.read(at: start + done, count: Int(min(framedLength - done, 1 << 20)))
            try output.write(piece)
            done += Int64(piece.count)
        }
        add(offset, length, .values, .direct(offset: position))
        position += framedLength
    }

    /// Remembers a map record (`plain` is its node, decoded) to write with `writeMapFrames`; `crc32` and `encoding`
    /// are those it has where it is stored now.
    mutating func addMapNode(_ location: RecordLocation, plain: Data, crc32: UInt32, encoding: RecordEncoding) {
        add(location.offset, location.length, .map, .released)
        nodes.append(
            Node(
                key: Self.sortKey(plain), version: versions.count - 1,
                record: versions[versions.count - 1].records.count - 1,
                location: location, crc32: crc32, encoding: encoding))
    }

    /// Where a node goes among the others: by the hash of its first value ID, which places a leaf in the trie (nodes
    /// at one place in successive versions differ in a few entries). Branches go last, in the order they came.
    static func sortKey(_ plain: Data) -> UInt64 {
        var reader = ByteReader(plain)
        guard let tag = try? reader.byte(), tag == 0 || tag == 2, let count = try? reader.varint(), count > 0,
            let first = try? reader.string()
        else { return UInt64.max }
        return SHA256.digest(first).prefix(8).reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// Writes every remembered map node, reading each again with `read` (kept nodes are not held in memory).
    mutating func writeMapFrames(read: (RecordLocation) throws -> StoredRecord) throws {
        nodes.sort { ($0.key, $0.version, $0.location.offset) < ($1.key, $1.version, $1.location.offset) }
        var buffer = Data()
        buffer.reserveCapacity(FileStorage.mapFrameSize * 2)
        for node in nodes {
            let plain = try read(node.location).decoded()
            versions[node.version].records[node.record].placement = .framed(
                frame: UInt32(frames.count), offset: UInt32(buffer.count), crc32: node.crc32, encoding: node.encoding)
            buffer.append(contentsOf: RecordFraming.frame(plain, zone: .map))
            buffer.append(plain)
            if buffer.count >= FileStorage.mapFrameSize { try flush(&buffer) }
        }
        if !buffer.isEmpty { try flush(&buffer) }
        nodes = []
    }

    private mutating func flush(_ buffer: inout Data) throws {
        let stored = try Zstd.compressed(buffer, level: FileStorage.mapFrameLevel)
        try output.write(stored)
        frames.append(
            CompactedPackDirectory.Frame(
                offset: position, storedLength: Int64(stored.count), contentLength: Int64(buffer.count)))
        position += Int64(stored.count)
        buffer.removeAll(keepingCapacity: true)
    }

    /// Writes the directory and trailer; the caller commits the file.
    mutating func finish() throws -> CompactedPackDirectory {
        let directory = CompactedPackDirectory(frames: frames, versions: versions)
        let encoded = directory.encoded()
        try output.write(encoded)
        try output.write(CompactedPackDirectory.trailer(directoryOffset: position, length: Int64(encoded.count)))
        return directory
    }
}
