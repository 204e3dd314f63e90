import Foundation
import LLVSSupport

extension Version {
    /// A version file read by `JSONByteReader` rather than JSONDecoder: an import of an LLVS app's store reads one per
    /// version, tens of thousands, and the general decoder's cost per file would dominate it. It takes the shape LLVS writes (`identifier`, `predecessors`,
    /// `timestamp`, `valueDataSize`, `metadata` as key/base64 pairs, any order, unknown members skipped) and gives
    /// nil for anything else (malformed JSON, a `null`, a repeated member, a value of another type), which the
    /// caller then decodes with JSONDecoder, the reference, for its result or its error.
    static func fastDecoded(from data: Data) -> Version? {
        var reader = JSONByteReader(bytes: [UInt8](data))
        guard let version = try? reader.llvsVersion(), reader.isAtEnd() else { return nil }
        return version
    }

    /// A remote's version file (`{"version": {…}}`, what `RemoteFormat.decodeVersion` reads) the same way: a pull
    /// reads one per version. Nil for any other member beside `version`, or a repeated one, as for `fastDecoded`.
    static func fastDecodedRemoteFile(from data: Data) -> Version? {
        var reader = JSONByteReader(bytes: [UInt8](data))
        guard let version = try? reader.llvsRemoteVersionFile(), reader.isAtEnd() else { return nil }
        return version
    }
}

/// Thrown when the text is JSON but not in the shape a fast decoder takes; its caller then uses JSONDecoder.
struct NotTheUsualShape: Error {}

extension JSONByteReader {
    fileprivate mutating func llvsRemoteVersionFile() throws -> Version {
        var version: Version?
        try object { reader, name in
            guard name == "version", version == nil else { throw NotTheUsualShape() }
            version = try reader.llvsVersion()
        }
        guard let version else { throw NotTheUsualShape() }
        return version
    }

    fileprivate mutating func llvsVersion() throws -> Version {
        var id: String?, predecessors: Version.Predecessors?, timestamp: Double?, valueDataSize: Int64?
        var metadata: Version.Metadata?
        var seenPredecessors = false
        try object { reader, name in
            if name == "identifier" {
                guard id == nil else { throw NotTheUsualShape() }
                id = try reader.string()
            } else if name == "predecessors" {
                guard !seenPredecessors else { throw NotTheUsualShape() }
                seenPredecessors = true
                predecessors = try reader.llvsPredecessors()
            } else if name == "timestamp" {
                guard timestamp == nil, let value = Double(try reader.numberText()) else { throw NotTheUsualShape() }
                timestamp = value
            } else if name == "valueDataSize" {
                guard valueDataSize == nil, let value = Int64(try reader.numberText()) else { throw NotTheUsualShape() }
                valueDataSize = value
            } else if name == "metadata" {
                guard metadata == nil else { throw NotTheUsualShape() }
                metadata = try reader.llvsMetadata()
            } else {
                try reader.skipValue()
            }
        }
        guard let id, let timestamp else { throw NotTheUsualShape() }
        return Version(
            id: Version.ID(id), predecessors: predecessors, timestamp: timestamp, valueDataSize: valueDataSize,
            metadata: metadata ?? [:])
    }

    private mutating func llvsPredecessors() throws -> Version.Predecessors {
        let members = try llvsStringMembers(["idOfFirst", "idOfSecond"])
        guard let first = members[0] else { throw NotTheUsualShape() }
        return Version.Predecessors(idOfFirst: Version.ID(first), idOfSecond: members[1].map(Version.ID.init))
    }

    /// The string members of an object named in `names`, in that order (nil where absent); other members skipped.
    /// A repeated one, or one that is not a string, is not LLVS's shape.
    mutating func llvsStringMembers(_ names: [StaticString]) throws -> [String?] {
        var values = [String?](repeating: nil, count: names.count)
        try object { reader, name in
            guard let index = names.firstIndex(where: { name == $0 }) else { return try reader.skipValue() }
            guard values[index] == nil else { throw NotTheUsualShape() }
            values[index] = try reader.string()
        }
        return values
    }

    /// `[key1, {"data": base64}, key2, …]`; a later repeat of a key wins, as in `Version.Metadata`'s decoding.
    private mutating func llvsMetadata() throws -> Version.Metadata {
        var metadata = Version.Metadata()
        var key: String?
        try array { reader in
            if let pending = key {
                var data: Data?
                try reader.object { reader, name in
                    if name == "data" {
                        guard data == nil, let decoded = Data(base64Encoded: try reader.string()) else {
                            throw NotTheUsualShape()
                        }
                        data = decoded
                    } else {
                        try reader.skipValue()
                    }
                }
                guard let data else { throw NotTheUsualShape() }
                metadata[Version.MetadataKey(pending)] = Version.MetadataValue(data: data)
                key = nil
            } else {
                key = try reader.string()
            }
        }
        guard key == nil else { throw NotTheUsualShape() }
        return metadata
    }
}
