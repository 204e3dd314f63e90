import Foundation
import LLVS

extension ConnectorKind {
    /// `file:///path`: a folder on this machine or on any mounted file system. No account.
    public static let localFolder = ConnectorKind(name: "file", serviceName: "local folder", address: .localFolder) {
        access in
        LocalFolderFileSystem(root: URL(fileURLWithPath: access.url.path))
    }
}
