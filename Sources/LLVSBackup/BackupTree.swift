import Foundation
import LLVS
import LLVSSupport

/// One folder of a backup: its entries, sorted by their names' bytes, each with what it takes to restore it. Stored
/// as one value named by the hash of its encoding (`BackupObjectID.tree`), so an unchanged folder is the same value
/// in every backup, and a backup that changes one file writes only the folders on its path.
public struct BackupTree: Equatable, Sendable {
    public var entries: [BackupTreeEntry]

    public init(entries: [BackupTreeEntry]) { self.entries = entries }

    static let magic = Array("LLVSTREE".utf8)
    /// Format 1 has files, folders and links; format 2 adds FIFOs, devices and hard links; format 3 adds each
    /// entry's owner and extended attributes (and with them ACLs). A listing is written in the lowest format that
    /// holds it; the walk records owners, so what it writes is format 3, and listings of earlier backups stay as they
    /// were. A build that predates a format refuses a listing in it by name rather than misreading it.
    static let formatVersion: UInt8 = 1
    static let extendedFormatVersion: UInt8 = 2
    static let attributesFormatVersion: UInt8 = 3

    var format: UInt8 {
        if entries.contains(where: { $0.ownership != nil || !$0.extendedAttributes.isEmpty }) {
            return Self.attributesFormatVersion
        }
        return entries.contains(where: \.needsExtendedFormat) ? Self.extendedFormatVersion : Self.formatVersion
    }

    /// The binary form: magic, format, entry count, then each entry. Stable: the hash of these bytes names the tree.
    public func encoded() -> Data {
        var writer = ByteWriter()
        writer.append(Self.magic)
        let format = format
        writer.byte(format)
        writer.varint(UInt64(entries.count))
        for entry in entries { entry.encode(into: &writer, attributes: format >= Self.attributesFormatVersion) }
        return Data(writer.bytes)
    }

    /// Reads a listing, refusing anything a hostile store could use to escape a restore or confuse it: names that are
    /// empty, `.`, `..`, hold `/` or NUL, or are not in strictly increasing order (so no name appears twice).
    public init(decoding data: Data, id: String) throws {
        var reader = ByteReader(data)
        do {
            guard Array(try reader.raw(Self.magic.count)) == Self.magic else {
                throw BackupError.damagedObject(id: id, reason: "it is not a folder listing")
            }
            let format = try reader.byte()
            guard (Self.formatVersion...Self.attributesFormatVersion).contains(format) else {
                throw BackupError.damagedObject(
                    id: id, reason: "listing format \(format) is not readable by this build")
            }
            let count = try reader.int()
            var entries: [BackupTreeEntry] = []
            entries.reserveCapacity(min(count, 1 << 16))
            for _ in 0..<count {
                let entry = try BackupTreeEntry(
                    decoding: &reader, id: id, attributes: format >= Self.attributesFormatVersion)
                if entry.needsExtendedFormat, format == Self.formatVersion {
                    throw BackupError.damagedObject(
                        id: id,
                        reason: "a format 1 listing holds \(RawName.encode(entry.name)), which only format 2 has")
                }
                if let last = entries.last, !last.name.lexicographicallyPrecedes(entry.name) {
                    throw BackupError.damagedObject(
                        id: id, reason: "names out of order or repeated at \(RawName.encode(entry.name))")
                }
                entries.append(entry)
            }
            guard reader.isAtEnd else {
                throw BackupError.damagedObject(id: id, reason: "extra bytes after the last entry")
            }
            self.entries = entries
        } catch let failure as ByteReader.Failure {
            throw BackupError.damagedObject(id: id, reason: failure.description)
        }
    }

    /// The entry with exactly these name bytes (binary search: entries are sorted).
    public func entry(named name: [UInt8]) -> BackupTreeEntry? {
        var low = 0, high = entries.count
        while low < high {
            let middle = (low + high) / 2
            if entries[middle].name.lexicographicallyPrecedes(name) { low = middle + 1 } else { high = middle }
        }
        return low < entries.count && entries[low].name == name ? entries[low] : nil
    }
}

/// One entry of a folder listing. Times to the nanosecond; the name as the bytes the file system gave (Linux names
/// are bytes: two names that differ only in Unicode normalization are two entries).
public struct BackupTreeEntry: Equatable, Sendable {
    public enum Kind: UInt8, Sendable {
        case file = 1, directory = 2, symlink = 3, fifo = 4, characterDevice = 5, blockDevice = 6

        /// FIFOs and devices: restored as themselves, with no contents.
        public var isSpecial: Bool { self == .fifo || self == .characterDevice || self == .blockDevice }
    }

    /// Where a file's bytes are: inside the listing (small files, see `BackupWalk.embeddedLimit`), or in chunks
    /// stored as values of their own, in order. A FIFO or device holds its device number (0 for a FIFO).
    public enum Content: Equatable, Sendable {
        case embedded(Data)
        case chunks([ContentHash])
        case tree(ContentHash)
        case link(target: [UInt8])
        case device(UInt64)
    }

    public var name: [UInt8]
    public var kind: Kind
    public var mode: UInt32
    public var size: Int64
    public var modified: Int64
    public var modifiedNanoseconds: Int
    public var content: Content
    /// For a file with more than one name (hard links): the path, from the source's root, of the first of its names
    /// the backup met, the same in each name's entry, so a restore makes one file and links the others to it.
    public var hardLinkGroup: [UInt8]?
    /// Sorted by name; empty for most files.
    public var extendedAttributes: [ExtendedAttribute] = []
    /// The owner and group, as numbers; nil in listings of formats 1 and 2, which did not record them.
    public var ownership: Ownership?

    public struct Ownership: Equatable, Sendable {
        public var user: UInt32
        public var group: UInt32

        public init(user: UInt32, group: UInt32) {
            self.user = user
            self.group = group
        }
    }

    public init(
        name: [UInt8], kind: Kind, mode: UInt32, size: Int64, modified: Int64, modifiedNanoseconds: Int,
        content: Content,
        hardLinkGroup: [UInt8]? = nil
    ) {
        self.name = name
        self.kind = kind
        self.mode = mode
        self.size = size
        self.modified = modified
        self.modifiedNanoseconds = modifiedNanoseconds
        self.content = content
        self.hardLinkGroup = hardLinkGroup
    }

    var needsExtendedFormat: Bool { kind.isSpecial || hardLinkGroup != nil }

    public var modifiedTime: timespec { timespec(tv_sec: Int(modified), tv_nsec: modifiedNanoseconds) }

    func encode(into writer: inout ByteWriter, attributes: Bool) {
        writer.varint(UInt64(name.count))
        writer.append(name)
        writer.byte(kind.rawValue)
        writer.varint(UInt64(mode))
        writer.varint(UInt64(bitPattern: size))
        writer.uint64(UInt64(bitPattern: modified))
        writer.uint32(UInt32(modifiedNanoseconds))
        switch content {
        case .embedded(let data):
            writer.byte(hardLinkGroup == nil ? 1 : 6)
            writer.data(data)
        case .chunks(let hashes):
            writer.byte(hardLinkGroup == nil ? 2 : 7)
            writer.varint(UInt64(hashes.count))
            for hash in hashes { writer.append(hash.bytes) }
        case .tree(let hash):
            writer.byte(3)
            writer.append(hash.bytes)
        case .link(let target):
            writer.byte(4)
            writer.varint(UInt64(target.count))
            writer.append(target)
        case .device(let number):
            writer.byte(5)
            writer.varint(number)
        }
        if let hardLinkGroup {
            writer.varint(UInt64(hardLinkGroup.count))
            writer.append(hardLinkGroup)
        }
        if attributes {
            // 0 for no owner recorded, else the user's number plus one, then the group's.
            if let ownership {
                writer.varint(UInt64(ownership.user) + 1)
                writer.varint(UInt64(ownership.group))
            } else {
                writer.varint(0)
            }
            writer.varint(UInt64(extendedAttributes.count))
            for attribute in extendedAttributes {
                writer.varint(UInt64(attribute.name.count))
                writer.append(attribute.name)
                writer.data(attribute.value)
            }
        }
    }

    init(decoding reader: inout ByteReader, id: String, attributes: Bool) throws {
        let nameLength = try reader.int(limit: 4096)
        name = Array(try reader.raw(nameLength))
        guard !name.isEmpty, name != [46], name != [46, 46], !name.contains(0), !name.contains(47) else {
            throw BackupError.damagedObject(
                id: id, reason: "\(RawName.encode(name)) is not the name of an entry in a folder")
        }
        guard let kind = Kind(rawValue: try reader.byte()) else {
            throw BackupError.damagedObject(id: id, reason: "unknown entry kind")
        }
        self.kind = kind
        mode = UInt32(truncatingIfNeeded: try reader.varint())
        size = Int64(bitPattern: try reader.varint())
        modified = Int64(bitPattern: try reader.uint64())
        let nanoseconds = try reader.uint32()
        guard nanoseconds < 1_000_000_000, size >= 0 else {
            throw BackupError.damagedObject(id: id, reason: "bad size or time for \(RawName.encode(name))")
        }
        modifiedNanoseconds = Int(nanoseconds)
        let tag = try reader.byte()
        switch (tag, kind) {
        case (1, .file), (6, .file):
            content = .embedded(try reader.data())
        case (2, .file), (7, .file):
            let count = try reader.int()
            var hashes: [ContentHash] = []
            hashes.reserveCapacity(min(count, 1 << 16))
            for _ in 0..<count { hashes.append(ContentHash(bytes: try reader.raw(32))!) }
            content = .chunks(hashes)
        case (3, .directory):
            content = .tree(ContentHash(bytes: try reader.raw(32))!)
        case (4, .symlink):
            let length = try reader.int(limit: 1 << 16)
            content = .link(target: Array(try reader.raw(length)))
        case (5, _) where kind.isSpecial:
            content = .device(try reader.varint())
        default:
            throw BackupError.damagedObject(
                id: id, reason: "content of kind \(tag) for a \(kind) (\(RawName.encode(name)))")
        }
        if tag == 6 || tag == 7 {
            // A path below the source's root: relative, and no component that leaves it.
            let length = try reader.int(limit: 1 << 16)
            let group = Array(try reader.raw(length))
            let components = group.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
            guard !group.isEmpty, group.first != UInt8(ascii: "/"), !group.contains(0),
                !components.contains(where: { $0.isEmpty || $0.elementsEqual([46]) || $0.elementsEqual([46, 46]) })
            else {
                throw BackupError.damagedObject(
                    id: id, reason: "the hard link of \(RawName.encode(name)) names no path inside the backup")
            }
            hardLinkGroup = group
        } else {
            hardLinkGroup = nil
        }
        if attributes {
            let user = try reader.varint()
            if user > 0 {
                let group = try reader.varint()
                guard user - 1 <= UInt64(UInt32.max), group <= UInt64(UInt32.max) else {
                    throw BackupError.damagedObject(id: id, reason: "a bad owner for \(RawName.encode(name))")
                }
                ownership = Ownership(user: UInt32(user - 1), group: UInt32(group))
            }
            let count = try reader.int(limit: ExtendedAttribute.countLimit)
            for _ in 0..<count {
                let length = try reader.int(limit: ExtendedAttribute.nameLimit)
                let attributeName = Array(try reader.raw(length))
                let value = try reader.data()
                guard !attributeName.isEmpty, !attributeName.contains(0), value.count <= ExtendedAttribute.valueLimit,
                    extendedAttributes.last.map({ $0.name.lexicographicallyPrecedes(attributeName) }) ?? true
                else {
                    throw BackupError.damagedObject(
                        id: id, reason: "a bad extended attribute of \(RawName.encode(name))")
                }
                extendedAttributes.append(ExtendedAttribute(name: attributeName, value: value))
            }
        }
    }
}
