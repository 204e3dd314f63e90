import Foundation
import LLVS

/// Wraps a file system and misreports what it stored, as a buggy connector would: checksums that do not match the
/// bytes, or bytes read back that differ from those written. Tests run the suite over it to show the integrity
/// check catches such a connector whatever checksum it declares.
public struct MisreportingFileSystem: ForwardingFileSystem {
    public enum Lie: Sendable {
        /// Every reported checksum has its first character changed.
        case checksums
        /// Every download has its first byte flipped.
        case contents
    }

    public let base: any CloudFileSystem
    public let lie: Lie

    public init(_ base: any CloudFileSystem, lie: Lie) {
        self.base = base
        self.lie = lie
    }

    private func misreport(_ item: CloudItem) -> CloudItem {
        guard lie == .checksums else { return item }
        var item = item
        item.checksums = item.checksums.mapValues { value in
            guard let first = value.first else { return value }
            return (first == "0" ? "1" : "0") + value.dropFirst()
        }
        return item
    }

    private func misreport(_ data: Data) -> Data {
        guard lie == .contents, !data.isEmpty else { return data }
        var data = data
        data[data.startIndex] ^= 0xFF
        return data
    }

    public func list(_ folder: String) async throws -> [CloudItem] { try await base.list(folder).map(misreport) }
    public func listNames(_ folder: String) async throws -> [String] { try await base.listNames(folder) }
    public func metadata(_ path: String) async throws -> CloudItem { misreport(try await base.metadata(path)) }
    public func download(_ path: String) async throws -> Data { misreport(try await base.download(path)) }
    public func download(_ path: String, toFileAt destination: URL) async throws {
        try await base.download(path, toFileAt: destination)
        guard lie == .contents else { return }
        // The first byte flipped in place, so a large download is not read whole.
        let handle = try FileHandle(forUpdating: destination)
        defer { try? handle.close() }
        guard let first = try handle.read(upToCount: 1)?.first else { return }
        try handle.seek(toOffset: 0)
        try handle.write(contentsOf: Data([first ^ 0xFF]))
    }
    public func read(_ path: String, range: ByteRange) async throws -> Data { misreport(try await base.read(path, range: range)) }
    public func download(_ path: String, into destination: URL, at offset: Int64, length: Int64) async throws {
        try await base.download(path, into: destination, at: offset, length: length)
        guard lie == .contents, length > 0 else { return }
        let handle = try FileHandle(forUpdating: destination)
        defer { try? handle.close() }
        try handle.seek(toOffset: UInt64(offset))
        guard let first = try handle.read(upToCount: 1)?.first else { return }
        try handle.seek(toOffset: UInt64(offset))
        try handle.write(contentsOf: Data([first ^ 0xFF]))
    }
}
