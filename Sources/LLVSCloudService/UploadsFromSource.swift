import Foundation
import LLVS

/// A connector whose uploads all go through one operation on an `UploadSource`: `upload(_:to:)` from memory and
/// `upload(fileAt:to:)` from a local file come from it, so the choice between a simple and a resumable upload and
/// the check of what the service stored are written once per connector.
public protocol UploadsFromSource: CloudFileSystem {
    /// Stores `source` at `path`, replacing a file there, and checks what the service says it stored.
    func upload(_ source: UploadSource, to path: String) async throws
}

extension UploadsFromSource {
    public func upload(_ data: Data, to path: String) async throws {
        try await upload(.data(data), to: path)
    }

    public func upload(fileAt source: URL, to path: String) async throws {
        try await upload(try UploadSource(file: source), to: path)
    }
}
