import Foundation
import LLVS
import LLVSCloudService
import LLVSHTTP

/// A page of a Graph collection: its items and the link to the next page.
protocol GraphPage {
    associatedtype Element
    var value: [Element] { get }
    var nextLink: String? { get }
}

extension OneDriveItemPage: GraphPage {}

extension OneDriveFileSystem {
    /// Every page from `first`, following `@odata.nextLink` as Graph gives it until a page has none, within the
    /// configuration's page bound (`what` names the collection in errors). A link must be on the Graph host: each
    /// request carries the account's token. Nil when `fetch` finds nothing at the first page.
    func graphPages<Page: GraphPage>(
        from first: URL, what: String,
        fetch: (_ url: URL, _ isFirst: Bool) async throws -> Page?
    ) async throws -> [Page]? {
        var pages: [Page] = []
        var tokens = PageTokens(what, maximumPages: configuration.maximumPages)
        var next: URL? = first
        while let url = next {
            guard let page = try await fetch(url, pages.isEmpty) else { return nil }
            pages.append(page)
            next = try tokens.next(page.nextLink, items: page.value.count).map { try graphURL($0, what: what) }
        }
        return pages
    }

    /// A link Graph handed out, refused unless it is on the Graph host.
    func graphURL(_ link: String, what: String) throws -> URL {
        guard let url = URL(string: link), url.scheme == configuration.graphURL.scheme,
            url.host == configuration.graphURL.host,
            url.port == configuration.graphURL.port
        else {
            throw CloudFileSystemError.server(
                status: 200, message: "a link in \(what) is not on the Graph host: \(link.prefix(200))")
        }
        return url
    }
}
