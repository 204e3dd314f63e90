import Foundation
import LLVSCodecs
import LLVSSupport

/// The store folder layout of upstream LLVS (its FileZone and Store), which zip-v1 snapshots hold:
///
///     versions/<split(id, 2)>.json                                  the Version as JSON
///     values/<split(safeKey(valueId), 2)>/<split(storedVersionId + ".json", 1)>        the value's bytes
///     maps/__llvs_values/<split(safeKey(nodeKey), 2)>/<split(versionId + ".json", 1)>  a map node as JSON
///
/// where split(s, n) puts a "/" after the first n Characters (when s is longer) and safeKey writes "/" as
/// `LLVSSLASH` and ":" as `LLVSCOLON`. Value and map files may be `LLZF` + LZFSE. On Apple devices every name is
/// decomposed; Swift compares Strings by canonical equivalence, so a path computed here finds the entry either way.
enum UpstreamLayout {
    static let versionsFolder = "versions"
    static let valuesFolder = "values"
    static let mapFolder = "maps/__llvs_values"
    static let rootNodeKey = "__llvs_root"
    static let compressionMagic: [UInt8] = Array("LLZF".utf8)

    /// `text` with a "/" after its first `count` Characters, when it has more.
    static func split(_ text: String, after count: Int) -> String {
        // An ASCII text without CR (the usual UUID) has a Character per byte, so it is split by bytes: counting and
        // walking Characters would cost more than the rest of naming an archive's value file.
        var text = text
        let split = text.withUTF8 { bytes -> String? in
            guard bytes.count > count, !bytes.contains(where: { $0 >= 0x80 || $0 == 0x0D }) else { return nil }
            return String(unsafeUninitializedCapacity: bytes.count + 1) { out in
                _ = out.initialize(fromContentsOf: bytes[..<count])
                out[count] = UInt8(ascii: "/")
                _ = out[(count + 1)...].initialize(fromContentsOf: bytes[count...])
                return bytes.count + 1
            }
        }
        if let split { return split }
        guard text.count > count else { return text }
        let index = text.index(text.startIndex, offsetBy: count)
        return text[..<index] + "/" + text[index...]
    }

    static func safeKey(_ key: String) -> String {
        // Most keys have neither character; Foundation's replacing costs microseconds even when nothing is replaced.
        guard key.utf8.contains(where: { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: ":") }) else { return key }
        return key.replacingOccurrences(of: "/", with: "LLVSSLASH").replacingOccurrences(of: ":", with: "LLVSCOLON")
    }

    /// `safeKey` undone.
    static func unsafeKey(_ key: String) -> String {
        guard key.contains("LLVS") else { return key }
        return key.replacingOccurrences(of: "LLVSSLASH", with: "/").replacingOccurrences(of: "LLVSCOLON", with: ":")
    }

    static func versionPath(_ id: Version.ID) -> String {
        versionsFolder + "/" + split(id.rawValue, after: 2) + ".json"
    }

    static func zonePath(_ root: String, key: String, version: Version.ID) -> String {
        root + "/" + split(safeKey(key), after: 2) + "/" + split(version.rawValue + ".json", after: 1)
    }

    static func valuePath(_ id: Value.ID, storedIn version: Version.ID) -> String {
        zonePath(valuesFolder, key: id.rawValue, version: version)
    }

    static func nodePath(_ key: String, version: Version.ID) -> String {
        zonePath(mapFolder, key: key, version: version)
    }

    /// The node key and version of a map node file: `nodePath` read backwards; nil for a path that is not one.
    /// Lets an importer learn which sub-nodes each version wrote from the archive's file names alone.
    static func nodeLocation(ofPath path: String) -> UpstreamNodeReference? {
        if let ascii = asciiNodeLocation(ofPath: path) { return ascii }
        return generalNodeLocation(ofPath: path)
    }

    /// `nodeLocation` for the usual path, ASCII (so each byte is a Character; a CR, which pairs with LF into one
    /// Character, is left out), read by bytes: the Character counting, joining and rebuilding of the general rule cost
    /// microseconds a path, and an archive holds a map node file per version and bucket. Gives `.some(nil)` for an
    /// ASCII path that is not a node's and nil when the path is not plain ASCII (then the general rule decides).
    static func asciiNodeLocation(ofPath path: String) -> UpstreamNodeReference?? {
        var path = path
        return path.withUTF8 { bytes -> UpstreamNodeReference?? in
            guard !bytes.contains(where: { $0 >= 0x80 || $0 == 0x0D }) else { return nil }
            let prefix = mapFolderAndSlash.count
            guard bytes.count > prefix + 5, bytes.starts(with: mapFolderAndSlash),
                bytes.suffix(5).elementsEqual(jsonSuffix)
            else { return .some(nil) }
            // The folders between the map folder and ".json": where each "/" is (a node path has 2 or 3).
            let end = bytes.count - 5
            var slashes: [Int] = []
            slashes.reserveCapacity(3)
            for index in prefix..<end where bytes[index] == UInt8(ascii: "/") {
                guard slashes.count < 3 else { return .some(nil) }
                slashes.append(index)
            }
            guard slashes.count >= 2 else { return .some(nil) }
            // The key is split after 2 Characters when longer (one folder of 1 or 2, or two with the first of 2); the
            // version's name after 1. A key with "/" or ":" was written safe, so its folders hold neither.
            let versionFolder = slashes[slashes.count - 2], versionRest = slashes[slashes.count - 1]
            guard versionRest - versionFolder == 2 else { return .some(nil) }
            let keyBytes: [UInt8]
            if slashes.count == 2 {
                guard (1...2).contains(versionFolder - prefix) else { return .some(nil) }
                keyBytes = Array(bytes[prefix..<versionFolder])
            } else {
                guard slashes[0] - prefix == 2, versionFolder - slashes[0] > 1 else { return .some(nil) }
                keyBytes = Array(bytes[prefix..<slashes[0]]) + bytes[(slashes[0] + 1)..<versionFolder]
            }
            guard !keyBytes.contains(UInt8(ascii: ":")) else { return .some(nil) }
            let keyText = String(decoding: keyBytes, as: UTF8.self)
            // Only a key holding "LLVS" can hold an escape ("LLVSSLASH", "LLVSCOLON"); found by bytes, not Foundation.
            let key = containsLLVS(keyBytes) ? unsafeKey(keyText) : keyText
            var versionBytes = [UInt8](bytes[(versionFolder + 1)..<versionRest])
            versionBytes += bytes[(versionRest + 1)..<end]
            return .some(
                UpstreamNodeReference(key: key, version: Version.ID(String(decoding: versionBytes, as: UTF8.self))))
        }
    }

    private static let mapFolderAndSlash = Array((mapFolder + "/").utf8)
    private static let jsonSuffix = Array(".json".utf8)

    private static func containsLLVS(_ bytes: [UInt8]) -> Bool {
        bytes.count >= 4
            && (0...(bytes.count - 4)).contains {
                bytes[$0] == UInt8(ascii: "L") && bytes[$0 + 1] == UInt8(ascii: "L")
                    && bytes[$0 + 2] == UInt8(ascii: "V") && bytes[$0 + 3] == UInt8(ascii: "S")
            }
    }

    /// `nodePath` read backwards by rebuilding it: right for any name, decomposed ones included.
    static func generalNodeLocation(ofPath path: String) -> UpstreamNodeReference? {
        guard path.hasPrefix(mapFolder + "/"), path.hasSuffix(".json") else { return nil }
        let components = path.dropFirst(mapFolder.count + 1).dropLast(5).split(
            separator: "/", omittingEmptySubsequences: false)
        // The version's split puts one Character in its own folder; the key's part is one or two folders.
        guard components.count == 3 || components.count == 4, components[components.count - 2].count == 1 else {
            return nil
        }
        let version = Version.ID(String(components[components.count - 2] + components[components.count - 1]))
        let key = unsafeKey(components.dropLast(2).joined())
        guard !key.isEmpty, nodePath(key, version: version) == path else { return nil }
        return UpstreamNodeReference(key: key, version: version)
    }

    /// The sub-node a value belongs to: its first two Characters.
    static func bucket(of id: Value.ID) -> String { String(id.rawValue.prefix(2)) }

    /// Upstream's `decompressIfNeeded`: a file longer than 4 bytes starting with `LLZF` is LZFSE after those 4
    /// bytes; one that does not decode is taken as it is, as upstream does.
    static func decompressIfNeeded(_ data: Data, limit: Int) throws -> Data {
        guard data.count > 4, data.prefix(4).elementsEqual(compressionMagic) else { return data }
        do {
            return Data(try LZFSE.decode([UInt8](data.dropFirst(4)), limit: limit))
        } catch .tooLarge(let limit) {
            throw LZFSEError.tooLarge(limit: limit)
        } catch {
            return data
        }
    }
}

extension UpstreamLayout {
    /// A file that is `LLZF` + one stored LZFSE block (`bvx-`, a length, the bytes, `bvx$`), as `ZipV1Writer` frames a
    /// value that begins with `LLZF`, is replaced by the bytes it holds, copied in pieces (a large value is never
    /// whole in memory). False, leaving the file, when it is any other stream.
    static func unframeStoredBlock(at path: String) throws -> Bool {
        let file = try ReadableFile(path: path)
        guard file.size >= 16 else { return false }
        var head = ByteReader(try file.read(at: 4, count: 8))
        var end = ByteReader(try file.read(at: file.size - 4, count: 4))
        guard try head.uint32() == LZFSE.stored, Int64(try head.uint32()) == file.size - 16,
            try end.uint32() == LZFSE.endOfStream
        else {
            return false
        }
        let writer = try AtomicFileWriter(destination: path)
        do {
            var offset: Int64 = 12
            while offset < file.size - 4 {
                let piece = try file.read(at: offset, count: Int(min(Int64(1 << 20), file.size - 4 - offset)))
                try writer.write(piece)
                offset += Int64(piece.count)
            }
            try writer.commit(durable: false)
        } catch {
            writer.discard()
            throw error
        }
        return true
    }
}

/// Upstream's `ZoneReference`: a map node's key and the version whose copy of it to read.
struct UpstreamNodeReference: Codable, Hashable {
    var key: String
    var version: Version.ID
}

/// Upstream's `Map.Node`: a root (`children.nodes`, one reference per sub-node) or a sub-node
/// (`children.values`, the value references of the ids starting with its key).
struct UpstreamMapNode: Codable {
    struct ValueEntry: Codable {
        struct Key: Codable { var keyString: String }
        var key: Key
        var valueReference: Value.Reference
    }

    enum Children: Codable {
        case nodes([UpstreamNodeReference])
        case values([ValueEntry])

        enum CodingKeys: String, CodingKey { case nodes, values }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            if let nodes = try container.decodeIfPresent([UpstreamNodeReference].self, forKey: .nodes) {
                self = .nodes(nodes)
            } else {
                self = .values(try container.decode([ValueEntry].self, forKey: .values))
            }
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            switch self {
            case .nodes(let nodes): try container.encode(nodes, forKey: .nodes)
            case .values(let values): try container.encode(values, forKey: .values)
            }
        }
    }

    var reference: UpstreamNodeReference
    var children: Children
}

extension UpstreamMapNode {
    /// The node as compact JSON, written directly (a snapshot writes tens of thousands, too many for a general encoder's cost); the same
    /// object JSONEncoder would write, keys in a fixed order.
    func encodedJSON() -> Data {
        var out: [UInt8] = []
        out.reserveCapacity(estimatedJSONSize)
        func string(_ text: String) {
            out.append(UInt8(ascii: "\""))
            // IDs and keys rarely need escaping: such a string is copied whole, the rest byte by byte.
            var text = text
            let copiedWhole = text.withUTF8 { utf8 in
                guard !utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") })
                else { return false }
                out.append(contentsOf: utf8)
                return true
            }
            if copiedWhole {
                out.append(UInt8(ascii: "\""))
                return
            }
            for byte in text.utf8 {
                switch byte {
                case UInt8(ascii: "\""): out += Array(#"\""#.utf8)
                case UInt8(ascii: "\\"): out += Array(#"\\"#.utf8)
                case 0x0A: out += Array(#"\n"#.utf8)
                case 0x0D: out += Array(#"\r"#.utf8)
                case 0x09: out += Array(#"\t"#.utf8)
                case 0..<0x20:
                    let hex = Array("0123456789abcdef".utf8)
                    out += Array(#"\u00"#.utf8) + [hex[Int(byte >> 4)], hex[Int(byte & 15)]]
                default: out.append(byte)
                }
            }
            out.append(UInt8(ascii: "\""))
        }
        func raw(_ text: StaticString) {
            out += UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount)
        }
        func reference(_ reference: UpstreamNodeReference) {
            raw(#"{"key":"#); string(reference.key); raw(#","version":"#); string(reference.version.rawValue); raw("}")
        }
        raw(#"{"reference":"#); reference(self.reference); raw(#","children":"#)
        switch children {
        case .nodes(let nodes):
            raw(#"{"nodes":["#)
            for (index, node) in nodes.enumerated() { if index > 0 { raw(",") }; reference(node) }
        case .values(let values):
            raw(#"{"values":["#)
            for (index, value) in values.enumerated() {
                if index > 0 { raw(",") }
                raw(#"{"key":{"keyString":"#); string(value.key.keyString)
                raw(#"},"valueReference":{"valueId":"#); string(value.valueReference.valueId.rawValue)
                raw(#","storedVersionId":"#); string(value.valueReference.storedVersionId.rawValue); raw("}}")
            }
        }
        raw("]}}")
        return Data(out)
    }

    /// About the size of `encodedJSON()` for UUID-sized IDs, so its buffer is allocated once.
    private var estimatedJSONSize: Int {
        switch children {
        case .nodes(let nodes): 96 + nodes.count * 64
        case .values(let values): 96 + values.count * 180
        }
    }
}
