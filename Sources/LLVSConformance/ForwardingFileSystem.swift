import Foundation
import LLVS

/// A file system that hands every operation to another, so a wrapper writes only the operations it changes: a
/// connector that misreports what it stored, or one broken on purpose to show a check catches it. Every requirement
/// of `CloudFileSystem` is forwarded (`WrapperForwardingTests` checks each).
public protocol ForwardingFileSystem: CloudFileSystem {
    var base: any CloudFileSystem { get }
}

extension ForwardingFileSystem {
    public var capabilities: CloudCapabilities { base.capabilities }
    public func exists(_ path: String) async throws -> Bool { try await base.exists(path) }
    public func list(_ folder: String) async throws -> [CloudItem] { try await base.list(folder) }
    public func listNames(_ folder: String) async throws -> [String] { try await base.listNames(folder) }
    public func metadata(_ path: String) async throws -> CloudItem { try await base.metadata(path) }
    public func stager(for path: String) async throws -> FileStager { try await base.stager(for: path) }
    public func upload(_ source: UploadSource, to path: String, mode: UploadMode) async throws {
        try await base.upload(source, to: path, mode: mode)
    }
    public func read(_ path: String, range: ByteRange?) async throws -> Data { try await base.read(path, range: range) }
    public func download(_ path: String, to destination: DownloadDestination) async throws {
        try await base.download(path, to: destination)
    }
    public func makeFolder(_ path: String) async throws { try await base.makeFolder(path) }
    public func removeFile(_ path: String) async throws { try await base.removeFile(path) }
    public func removeFolder(_ path: String) async throws { try await base.removeFolder(path) }
}
