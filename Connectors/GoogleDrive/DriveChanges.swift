import Foundation
import LLVS
import LLVSCloudService
import LLVSHTTP

/// One entry of Drive's changes feed: something was added, changed, trashed or removed.
public struct DriveChange: Sendable, Equatable {
    public var fileID: String
    public var removed: Bool
    /// The item as it is now (nil when it was removed for good).
    public var name: String?
    public var isFolder: Bool
    public var trashed: Bool
}

/// The changes feed (`changes/startPageToken`, `changes`): what changed anywhere in the drive since a token, so a
/// client that keeps the token can ask "anything new?" with one request instead of listing folders.
extension GoogleDriveFileSystem {
    private struct StartToken: Decodable { var startPageToken: String }
    private struct ChangeList: Decodable {
        struct Change: Decodable {
            var fileId: String?
            var removed: Bool?
            var file: DriveFile?
        }
        var changes: [Change]?
        var nextPageToken: String?
        var newStartPageToken: String?
    }

    /// A token for "now": changes after it are reported by `changes(since:)`.
    public func startPageToken() async throws -> String {
        try await client.json(StartToken.self, HTTPRequest(url: try configuration.api("/changes/startPageToken")), path: "changes/startPageToken").startPageToken
    }

    /// Every change since `token`, page after page, and the token to ask with next time.
    public func changes(since token: String) async throws -> (changes: [DriveChange], next: String) {
        var changes: [DriveChange] = []
        var pageToken = token
        var tokens = PageTokens("Google Drive's changes feed", maximumPages: configuration.maximumPages)
        while true {
            let fields = "nextPageToken,newStartPageToken,changes(fileId,removed,file(\(DriveFile.fields)))"
            let response = try await client.checked(HTTPRequest(url: try configuration.api("/changes", [
                ("pageToken", pageToken), ("fields", fields), ("pageSize", String(configuration.pageSize)), ("spaces", "drive"),
            ])), path: "changes")
            let page = try client.decode(ChangeList.self, response, path: "changes")
            for change in page.changes ?? [] {
                guard let id = change.fileId ?? change.file?.id else { continue }
                changes.append(DriveChange(fileID: id, removed: change.removed ?? false, name: change.file?.name,
                                           isFolder: change.file?.isFolder ?? false, trashed: change.file?.trashed ?? false))
            }
            if let next = try tokens.next(page.nextPageToken) { pageToken = next; continue }
            guard let newStart = page.newStartPageToken else {
                throw CloudFileSystemError.server(status: response.status, message: "Google Drive's changes page has neither nextPageToken nor newStartPageToken")
            }
            return (changes, newStart)
        }
    }
}
