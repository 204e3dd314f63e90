import Foundation
import LLVS

/// A file system that hands every operation to another, so a wrapper writes only the operations it changes: a
/// connector that misreports what it stored, or one broken on purpose to show a check catches it. Every requirement
/// of `CloudFileSystem` is forwarded, those with defaults too: a default left to run would answer in the wrapper's
/// place (a listing of names by a full listing, a region downloaded through memory, a staged file copied), so the
/// base would be tested for what it does not do (`WrapperForwardingTests` checks each).
public protocol ForwardingFileSystem: CloudFileSystem {
    var base: any CloudFileSystem { get }
}

extension ForwardingFileSystem {
    public var capabilities: CloudCapabilities { base.capabilities }
    public func exists(_ path: String) async throws -> Bool { try await base.exists(path) }
    public func list(_ folder: String) async throws -> [CloudItem] { try await base.list(folder) }
    public func metadata(_ path: String) async throws -> CloudItem { try await base.metadata(path) }
    public func upload(_ data: Data, to path: String) async throws { try await base.upload(data, to: path) }
    public func upload(fileAt source: URL, to path: String) async throws { try await base.upload(fileAt: source, to: path) }
    public func download(_ path: String) async throws -> Data { try await base.download(path) }
    public func download(_ path: String, toFileAt destination: URL) async throws { try await base.download(path, toFileAt: destination) }
    public func read(_ path: String, range: ByteRange) async throws -> Data { try await base.read(path, range: range) }
    public func makeFolder(_ path: String) async throws { try await base.makeFolder(path) }
    public func removeFile(_ path: String) async throws { try await base.removeFile(path) }
    public func removeFolder(_ path: String) async throws { try await base.removeFolder(path) }
    public func listNames(_ folder: String) async throws -> [String] { try await base.listNames(folder) }
    public func stager(for path: String) async throws -> FileStager { try await base.stager(for: path) }
    public func upload(stagedFileAt source: URL, to path: String) async throws { try await base.upload(stagedFileAt: source, to: path) }
    public func download(_ path: String, into destination: URL, at offset: Int64, length: Int64) async throws {
        try await base.download(path, into: destination, at: offset, length: length)
    }
}
