import Foundation
import LLVSSupport

/// A version's changes in the remote format (`[Value.Change]` as JSON): in memory when they are small, in a file
/// when a value is large, so no side of an exchange holds a large value whole.
public enum EncodedChanges: Sendable {
    case data(Data)
    /// A file of encoded changes; an `owned` file is temporary and removed by `discard()`.
    case file(URL, owned: Bool)
    /// A temporary file a file system's `FileStager` wrote for its upload (perhaps transformed: sealed), to be sent
    /// as `UploadSource.staged` and never read here.
    case staged(URL)
    /// Compact changes with the index of where their values lie in them (`CompactChangesIndex`), which a cloud
    /// exchange writes beside them; everything else reads them as the changes alone.
    indirect case indexed(EncodedChanges, index: CompactChangesIndex)

    /// The changes without their index.
    public var unindexed: EncodedChanges {
        if case .indexed(let changes, _) = self { return changes.unindexed }
        return self
    }

    /// Removes the temporary file, if this owns one.
    public func discard() {
        switch self {
        case .file(let url, true), .staged(let url): try? FileManager.default.removeItem(at: url)
        case .data, .file: break
        case .indexed(let changes, _): changes.discard()
        }
    }

    /// What an upload of these changes reads: the bytes, the file, or the file a stager wrote.
    func uploadSource() throws -> UploadSource {
        switch self {
        case .data(let data): .data(data)
        case .file(let url, _): try UploadSource(file: url)
        case .staged(let url): try UploadSource(staged: url)
        case .indexed(let changes, _): try changes.uploadSource()
        }
    }

    /// The first `count` bytes (fewer when the encoding is shorter): what a reader looks at to tell the formats apart.
    func prefix(_ count: Int) throws -> Data {
        switch self {
        case .data(let data): return Data(data.prefix(count))
        case .file(let url, _):
            let handle = try FileHandle(forReadingFrom: url)
            defer { try? handle.close() }
            return try handle.read(upToCount: count) ?? Data()
        case .staged(let url): throw ExchangeError.stagedChangesNotReadable(path: url.path)
        case .indexed(let changes, _): return try changes.prefix(count)
        }
    }

    /// The whole encoding in memory (for small changes, and tests).
    public func data() throws -> Data {
        switch self {
        case .data(let data): return data
        case .file(let url, _): return try POSIX.readFile(url.path)
        case .staged(let url): throw ExchangeError.stagedChangesNotReadable(path: url.path)
        case .indexed(let changes, _): return try changes.data()
        }
    }
}

extension Store {
    /// Values up to this size travel inline; larger ones are streamed between storage and files.
    public static let inlineValueLimit: Int64 = 4 * 1024 * 1024

    /// The changes a version made, encoded for a remote (docs/remote-format.md). When its values hold more than
    /// `inlineLimit` bytes the encoding goes to a temporary file, one value at a time, and a value larger than the
    /// limit is copied out of storage and written as base64 in pieces, so sending a version costs bounded memory
    /// whatever it holds. The bytes equal JSONEncoder's with sorted keys either way.
    /// With a `stager`, the file is written through it for one upload and returned as `.staged`.
    public func encodedChanges(
        madeInVersionIdentifiedBy id: Version.ID, inlineLimit: Int64 = Store.inlineValueLimit,
        stager: FileStager? = nil
    ) throws -> EncodedChanges {
        let planned = try plannedChanges(madeInVersionIdentifiedBy: id)
        let released = try releasedRecords()
        if !released.isEmpty, let entry = planned.lazy.compactMap(\.entry).first(where: { released.contains($0.data) })
        {
            throw ExchangeError.releasedValue(version: id, value: entry.valueId)
        }
        // Many values below the limit (a backup's chunks) are streamed too: encoded whole, they would sit in memory
        // several times over (data, base64, JSON) for each version in flight.
        let total = planned.reduce(Int64(0)) { $0 + ($1.entry?.size ?? 0) }
        guard total > inlineLimit else {
            return .data(try RemoteFormat.encodeChanges(try planned.map(change(for:))))
        }
        let url = temporaryFile("send")
        let raw = url.appendingPathExtension("value")
        defer { try? FileManager.default.removeItem(at: raw) }
        do {
            let out = try (stager ?? .plain).makeWriter(url)
            try out.write(Data("[".utf8))
            for (index, change) in planned.enumerated() {
                if index > 0 { try out.write(Data(",".utf8)) }
                guard let entry = change.entry, entry.size > inlineLimit else {
                    try out.write(try RemoteFormat.encodeChange(try self.change(for: change)))
                    continue
                }
                let kind = if case .update = change { "update" } else { "insert" }
                try out.write(Data(#"{"\#(kind)":{"data":""#.utf8))
                try storage.copyRecord(at: entry.data, zone: .values, to: raw)
                try Base64Stream.encode(fileAt: raw, to: out)
                try out.write(
                    Data(#"","id":"#.utf8) + RemoteFormat.jsonString(entry.valueId.rawValue)
                        + Data(#","storedVersionId":"#.utf8) + RemoteFormat.jsonString(entry.storedVersionId.rawValue)
                        + Data("}}".utf8))
            }
            try out.write(Data("]".utf8))
            try out.finish()
        } catch {
            try? FileManager.default.removeItem(at: url)
            throw error
        }
        if stager != nil { return .staged(url) }
        return .file(url, owned: true)
    }
}

/// Base64 in pieces, for values too large to encode or decode in one go.
enum Base64Stream {
    /// Appends the base64 of a file to `out`, reading 3 MiB (a multiple of 3 bytes) at a time, with `/` written `\/`
    /// as JSONEncoder writes it inside a string, so the file is byte for byte what LLVS apps write.
    static func encode(fileAt url: URL, to out: any StagedFileWriter) throws {
        let input = try FileHandle(forReadingFrom: url)
        defer { try? input.close() }
        while let piece = try input.read(upToCount: 3 << 20), !piece.isEmpty {
            let encoded = piece.base64EncodedData()
            // Copied run by run between slashes through a raw buffer: appending byte by byte to a Data costs an
            // exclusivity check per byte, which made encoding the slowest part of sending a large value.
            var escaped = [UInt8]()
            escaped.reserveCapacity(encoded.count + encoded.count / 32)
            encoded.withUnsafeBytes { (raw: UnsafeRawBufferPointer) in
                var start = 0
                for index in 0..<raw.count where raw[index] == UInt8(ascii: "/") {
                    escaped.append(contentsOf: raw[start..<index])
                    escaped.append(UInt8(ascii: "\\"))
                    start = index
                }
                escaped.append(contentsOf: raw[start...])
            }
            try out.write(Data(escaped))
        }
    }
}
