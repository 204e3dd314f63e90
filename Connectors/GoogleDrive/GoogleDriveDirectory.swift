import Foundation
import LLVS
import LLVSCloudService
import LLVSHTTP

/// What the shared ID path cache needs of Drive: the items of one name in a folder (a query, since Drive allows
/// duplicates) and a folder creation. Drive's `name =` ignores case and LLVS names do not, so matches are
/// filtered exactly.
struct GoogleDriveDirectory: IDDirectory {
    /// Drive's `name =` ignores case, its names do not: a match must be the name byte for byte.
    static let names = PathKeys(caseInsensitive: false)

    let client: ServiceClient
    let configuration: GoogleDriveConfiguration

    var rootID: String { configuration.rootFolderID }
    var allowsDuplicateNames: Bool { true }

    func preferred(_ items: [GoogleDriveItem]) -> GoogleDriveItem? { GoogleDriveItem.chosen(items) }

    func items(named name: String, in folderID: String, path: String) async throws -> [GoogleDriveItem] {
        try await query(GoogleDriveQuery.named(name, in: folderID), path: path).filter {
            Self.names.sameName($0.name, name)
        }
    }

    /// Every item of a query, page after page.
    func query(_ q: String, path: String, fields: String = GoogleDriveItem.fields) async throws -> [GoogleDriveItem] {
        var files: [GoogleDriveItem] = []
        var pageToken: String?
        var tokens = PageTokens(
            "Google Drive's listing of \(path.isEmpty ? "the root" : path)", maximumPages: configuration.maximumPages)
        repeat {
            var parameters = [
                ("q", q), ("fields", "nextPageToken,files(\(fields))"), ("pageSize", String(configuration.pageSize)),
                ("spaces", "drive"),
            ]
            if let pageToken { parameters.append(("pageToken", pageToken)) }
            let page = try await client.json(
                GoogleDriveItemList.self, HTTPRequest(url: try configuration.api("/files", parameters)), path: path)
            files += page.files ?? []
            pageToken = try tokens.next(page.nextPageToken, items: page.files?.count ?? 0)
        } while pageToken != nil
        return files
    }

    /// A POST that must not land twice: after a lost answer, the folder is looked for before sending again.
    func createFolder(named name: String, in folderID: String, path: String) async throws -> GoogleDriveItem? {
        let request = ServiceClient.jsonRequest(
            "POST", try configuration.api("/files", [("fields", GoogleDriveItem.fields)]),
            GoogleDriveItem.Creation(
                name: name, mimeType: GoogleDriveConfiguration.folderMimeType, parents: [folderID]),
            safeToRepeat: false)
        return try await client.createOnce(
            request, path: path, decode: { try client.decode(GoogleDriveItem.self, $0, path: path) }
        ) {
            preferred(try await items(named: name, in: folderID, path: path).filter(\.isFolder))
        }
    }
}
