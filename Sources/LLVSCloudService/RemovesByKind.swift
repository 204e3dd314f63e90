import Foundation
import LLVS

/// A connector that removes files and folders through one operation told the kind: `removeFile` and
/// `removeFolder` come from it, the root refused as a folder to remove.
public protocol RemovesByKind: CloudFileSystem {
    /// Removes what is at `path` when it is of the kind asked (a missing item is fine); the other kind is `wrongKind`.
    func remove(_ path: String, folder: Bool) async throws
}

extension RemovesByKind {
    public func removeFile(_ path: String) async throws {
        try await remove(path, folder: false)
    }

    public func removeFolder(_ path: String) async throws {
        guard try !CloudPath.components(path).isEmpty else { throw CloudFileSystemError.invalidPath(path) }
        try await remove(path, folder: true)
    }
}
