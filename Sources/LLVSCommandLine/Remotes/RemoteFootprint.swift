import Foundation
import LLVS

/// The files a remote holds under its folder and their bytes, from listings alone (no file is read): what the remote
/// costs on the service, sealed files as sealed. A few listing requests per folder, so `llvs stats` asks for it only
/// when told which remotes.
struct RemoteFootprint: Encodable, Equatable {
    var name: String
    var files = 0
    var bytes: Int64 = 0
    /// Files whose listing gave no size (a service that does not say one): their bytes are not in `bytes`.
    var unsized = 0

    static func measure(_ connection: RemoteConnection) async throws -> RemoteFootprint {
        var footprint = RemoteFootprint(name: connection.name)
        var folders = [connection.basePath]
        while let folder = folders.popLast() {
            let items: [CloudItem]
            do { items = try await connection.plainFileSystem.list(folder) } catch CloudFileSystemError.notFound {
                continue
            }
            for item in items {
                if item.isFolder {
                    folders.append(CloudPath.join(folder, item.name))
                } else {
                    footprint.files += 1
                    if let size = item.size { footprint.bytes += size } else { footprint.unsized += 1 }
                }
            }
        }
        return footprint
    }
}
