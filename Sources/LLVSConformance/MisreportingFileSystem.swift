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
    public func metadata(_ path: String) async throws -> CloudItem { misreport(try await base.metadata(path)) }
    public func read(_ path: String, range: ByteRange?) async throws -> Data {
        misreport(try await base.read(path, range: range))
    }
    /// The first byte written is flipped in place, so a large download is not read whole.
    public func download(_ path: String, to destination: DownloadDestination) async throws {
        try await base.download(path, to: destination)
        guard lie == .contents else { return }
        let url: URL, offset: Int64
        switch destination {
        case .file(let file): (url, offset) = (file, 0)
        case .region(let file, let at, let length):
            guard length > 0 else { return }
            (url, offset) = (file, at)
        }
        let handle = try FileHandle(forUpdating: url)
        defer { try? handle.close() }
        try handle.seek(toOffset: UInt64(offset))
        guard let first = try handle.read(upToCount: 1)?.first else { return }
        try handle.seek(toOffset: UInt64(offset))
        try handle.write(contentsOf: Data([first ^ 0xFF]))
    }
}
