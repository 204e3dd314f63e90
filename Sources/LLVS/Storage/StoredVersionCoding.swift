import Foundation
import LLVSSupport

/// The compact binary form of a `StoredVersion`, used for the header of every version in storage. Opening a
/// store reads one header per version, so this is kept cheap to decode (no JSON).
enum StoredVersionCoding {
    static let formatVersion: UInt8 = 1

    static func encode(_ stored: StoredVersion) -> Data {
        var writer = ByteWriter()
        writer.byte(formatVersion)
        let version = stored.version
        writer.string(version.id.rawValue)
        let predecessors = version.predecessors?.ids ?? []
        writer.byte(UInt8(predecessors.count))
        for id in predecessors { writer.string(id.rawValue) }
        writer.uint64(version.timestamp.bitPattern)
        if let size = version.valueDataSize {
            writer.byte(1)
            writer.varint(UInt64(bitPattern: size))
        } else {
            writer.byte(0)
        }
        let keys = version.metadata.entries.keys.sorted()
        writer.varint(UInt64(keys.count))
        for key in keys {
            writer.string(key.rawValue)
            writer.data(version.metadata.entries[key]!.data)
        }
        if let root = stored.mapRoot {
            writer.byte(1)
            writer.string(root.versionId.rawValue)
            writer.varint(UInt64(root.offset))
            writer.varint(UInt64(root.length))
        } else {
            writer.byte(0)
        }
        writer.varint(UInt64(stored.valueCount))
        return Data(writer.bytes)
    }

    static func decode(_ data: Data) throws -> StoredVersion {
        var reader = ByteReader(data)
        let format = try reader.byte()
        guard format == formatVersion else {
            throw ByteReader.Failure(description: "header format \(format) is not readable by this build")
        }
        let id = Version.ID(try reader.string())
        let predecessorCount = try reader.byte()
        guard predecessorCount <= 2 else { throw ByteReader.Failure(description: "\(predecessorCount) predecessors") }
        var predecessors: [Version.ID] = []
        for _ in 0..<predecessorCount { predecessors.append(Version.ID(try reader.string())) }
        let timestamp = Double(bitPattern: try reader.uint64())
        let valueDataSize: Int64? = try reader.byte() == 1 ? Int64(bitPattern: try reader.varint()) : nil
        var metadata = Version.Metadata()
        for _ in 0..<(try reader.int(limit: data.count)) {
            let key = Version.MetadataKey(try reader.string())
            metadata[key] = Version.MetadataValue(data: try reader.data())
        }
        var root: RecordLocation?
        if try reader.byte() == 1 {
            root = RecordLocation(
                versionId: Version.ID(try reader.string()), offset: Int64(try reader.int(limit: Int.max)),
                length: Int64(try reader.int(limit: Int.max)))
        }
        let valueCount = try reader.int(limit: Int.max)
        guard reader.isAtEnd else { throw ByteReader.Failure(description: "extra bytes after the header") }
        let version = Version(
            id: id,
            predecessors: predecessors.first.map {
                Version.Predecessors(idOfFirst: $0, idOfSecond: predecessors.count == 2 ? predecessors[1] : nil)
            },
            timestamp: timestamp, valueDataSize: valueDataSize, metadata: metadata)
        return StoredVersion(version: version, mapRoot: root, valueCount: valueCount)
    }
}

extension StoredVersion {
    /// The binary header form storages keep.
    public func encoded() -> Data { StoredVersionCoding.encode(self) }

    /// Decodes a header; `source` names where it came from in errors.
    public init(decoding data: Data, source: String) throws {
        do {
            self = try StoredVersionCoding.decode(data)
        } catch let failure as ByteReader.Failure {
            throw StoreError.corruptFile(path: source, reason: "version header: \(failure.description)")
        }
    }
}
