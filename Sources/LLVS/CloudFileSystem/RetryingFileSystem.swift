import Foundation
import LLVSSupport

/// Retries a file system's retryable failures (`transient`, `rateLimited`) through the shared `RetryPolicy`.
/// Every `CloudFileSystem` operation is safe to repeat (uploads replace, removals accept a missing item), so all
/// are retried. For file systems without a retrying transport of their own, such as a flaky network share;
/// HTTP connectors already retry in their client and need no wrapper.
public struct RetryingFileSystem: CloudFileSystem {
    public let base: any CloudFileSystem
    public let policy: RetryPolicy

    public init(_ base: any CloudFileSystem, policy: RetryPolicy = RetryPolicy()) {
        self.base = base
        self.policy = policy
    }

    private func retrying<T>(_ operation: () async throws -> T) async throws -> T {
        try await policy.run(operation) { error in
            switch error as? CloudFileSystemError {
            case .rateLimited(let after)?: .retry(after: after)
            case .transient?: .retry(after: nil)
            default: .fail
            }
        }
    }

    public var capabilities: CloudCapabilities { base.capabilities }

    public func exists(_ path: String) async throws -> Bool { try await retrying { try await base.exists(path) } }
    public func list(_ folder: String) async throws -> [CloudItem] {
        try await retrying { try await base.list(folder) }
    }
    public func listNames(_ folder: String) async throws -> [String] {
        try await retrying { try await base.listNames(folder) }
    }
    public func metadata(_ path: String) async throws -> CloudItem {
        try await retrying { try await base.metadata(path) }
    }
    public func stager(for path: String) async throws -> FileStager {
        try await retrying { try await base.stager(for: path) }
    }
    public func upload(_ source: UploadSource, to path: String, mode: UploadMode) async throws {
        try await retrying { try await base.upload(source, to: path, mode: mode) }
    }
    public func read(_ path: String, range: ByteRange?) async throws -> Data {
        try await retrying { try await base.read(path, range: range) }
    }
    public func download(_ path: String, to destination: DownloadDestination) async throws {
        try await retrying { try await base.download(path, to: destination) }
    }
    public func makeFolder(_ path: String) async throws { try await retrying { try await base.makeFolder(path) } }
    public func removeFile(_ path: String) async throws { try await retrying { try await base.removeFile(path) } }
    public func removeFolder(_ path: String) async throws { try await retrying { try await base.removeFolder(path) } }
}
