import Foundation
import LLVS
import LLVSCloudService
import LLVSHTTP

/// What the shared ID path cache needs of pCloud: a folder's items of one name (`listfolder` answers the whole
/// folder at once, no pages; names are case-sensitive) and `createfolderifnotexists`, which is safe to repeat.
struct PCloudDirectory: IDDirectory {
    let api: PCloudAPI

    var rootID: String { "0" }

    func items(named name: String, in folderID: String, path: String) async throws -> [PCloudItem] {
        try await children(of: folderID, path: path).filter { PathKeys(caseInsensitive: false).sameName($0.name, name) }
    }

    /// `listfolder` answers a whole folder anyway: the cache keeps all of it from one listing.
    func allItems(in folderID: String, path: String) async throws -> [PCloudItem]? {
        try await children(of: folderID, path: path)
    }

    func children(of folderID: String, path: String) async throws -> [PCloudItem] {
        try await api.call(PCloudAnswer.Metadata.self, "listfolder", [("folderid", folderID)], path: path).metadata
            .contents ?? []
    }

    func createFolder(named name: String, in folderID: String, path: String) async throws -> PCloudItem? {
        do {
            return try await api.call(
                PCloudAnswer.Metadata.self, "createfolderifnotexists", [("folderid", folderID), ("name", name)],
                path: path
            ).metadata
        } catch CloudFileSystemError.alreadyExists {
            // A file of that name is there.
            throw CloudFileSystemError.wrongKind(path: path, expectedFolder: true)
        }
    }
}
