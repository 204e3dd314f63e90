import Foundation
import LLVS
import LLVSCloudService
import LLVSHTTP

/// What the shared ID path cache needs of Box: a folder's items of one name (a listing with marker paging and only
/// the fields used; names compare without regard to case, as Box's do) and a folder creation, where a 409
/// `item_name_in_use` names the folder that is there already (another client made it first).
struct BoxDirectory: IDDirectory {
    let client: ServiceClient
    let configuration: BoxConfiguration

    var rootID: String { "0" }

    func items(named name: String, in folderID: String, path: String) async throws -> [BoxItem] {
        let names = PathKeys(caseInsensitive: true)
        return try await children(of: folderID, path: path).filter { names.sameName($0.name, name) }
    }

    /// Box finds a name only by listing its folder: the cache keeps all of it from one listing.
    func allItems(in folderID: String, path: String) async throws -> [BoxItem]? {
        try await children(of: folderID, path: path)
    }

    /// Every active item of a folder, page after page.
    func children(of folderID: String, path: String) async throws -> [BoxItem] {
        var items: [BoxItem] = []
        var marker: String?
        var pages = PageTokens(
            "Box's listing of \(path.isEmpty ? "the root" : path)", maximumPages: configuration.maximumPages)
        repeat {
            var query = [("fields", BoxItem.fields), ("limit", String(configuration.pageSize)), ("usemarker", "true")]
            if let marker { query.append(("marker", marker)) }
            let url = try configuration.api("/folders/\(URLEscaping.escape(folderID))/items", query)
            let page = try await client.json(BoxItemPage.self, HTTPRequest(url: url), path: path)
            items += page.entries.filter(\.isActive)
            marker = try pages.next(page.next_marker.flatMap { $0.isEmpty ? nil : $0 }, items: page.entries.count)
        } while marker != nil
        return items
    }

    /// Safe to send again: a repeat after a lost answer meets the folder it made, as a 409 naming it.
    func createFolder(named name: String, in folderID: String, path: String) async throws -> BoxItem? {
        let request = ServiceClient.jsonRequest(
            "POST", try configuration.api("/folders", [("fields", BoxItem.fields)]),
            BoxPlacement(name: name, parent: .init(id: folderID)), safeToRepeat: true)
        let response = try await client.send(request)
        if response.isSuccess { return try client.decode(BoxItem.self, response, path: path) }
        let error = client.classifier.failure(response, path: path)
        guard case .alreadyExists = error else { throw error }
        guard let existing = BoxErrorBody(response).conflicts.first else { return nil }  // the cache looks it up
        guard existing.isFolder else { throw CloudFileSystemError.wrongKind(path: path, expectedFolder: true) }
        return existing
    }
}
