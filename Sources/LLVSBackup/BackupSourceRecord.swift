import Foundation
import LLVS

/// What a store knows of one backed-up source: its name (the folder's absolute path unless the user named it), the
/// folder it was read from, the root listing of its last backup and that backup's totals. Stored as JSON, small.
public struct BackupSourceRecord: Codable, Equatable, Sendable {
    public var format = 1
    public var name: String
    /// The folder's path, its bytes as `RawName` spells them.
    public var path: String
    /// The hex hash of the root folder listing.
    public var root: String
    public var files: Int
    public var folders: Int
    public var links: Int
    /// Bytes of every file in the backup (not only the new ones).
    public var bytes: Int64
    public var date: Date
    /// What the backup left out (absent when nothing): the next backup of the source leaves out the same unless told
    /// otherwise. Earlier builds read records without it, and ignore it in records that have it.
    public var exclusions: BackupExclusions?

    public init(
        name: String, path: String, root: ContentHash, files: Int, folders: Int, links: Int, bytes: Int64, date: Date,
        exclusions: BackupExclusions? = nil
    ) {
        self.name = name
        self.path = path
        self.root = root.hex
        self.files = files
        self.folders = folders
        self.links = links
        self.bytes = bytes
        self.date = date
        self.exclusions = exclusions
    }

    public var rootHash: ContentHash? { ContentHash(hex: root) }

    public func encoded() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.dateEncodingStrategy = .iso8601
        return try encoder.encode(self)
    }

    public init(decoding data: Data, id: Value.ID) throws {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        do { self = try decoder.decode(Self.self, from: data) } catch {
            throw BackupError.damagedObject(id: id.rawValue, reason: "it is not a source record (\(error))")
        }
        guard format == 1 else {
            throw BackupError.damagedObject(
                id: id.rawValue, reason: "source record format \(format) is not readable by this build")
        }
        guard rootHash != nil else {
            throw BackupError.damagedObject(id: id.rawValue, reason: "its root is not a hash")
        }
    }
}

/// The list of source names, kept so a store can say what it backs up without reading every value. Each backup
/// adds its own name again, so a name a merge dropped (two stores adding sources at once) returns with its next backup.
public enum BackupSourceList {
    public static func decode(_ data: Data?) -> [String] {
        guard let data, let names = try? JSONDecoder().decode([String].self, from: data) else { return [] }
        return names
    }

    public static func encode(_ names: [String]) -> Data {
        (try? JSONEncoder().encode(Array(Set(names)).sorted())) ?? Data("[]".utf8)
    }
}
