import Foundation
import LLVS

/// Follows a listing's page tokens (Drive's `nextPageToken`, Box's markers, Graph's `@odata.nextLink`) with a bound:
/// a token seen before, or more pages than any real listing has, is a hostile or broken server, and the listing
/// ends with an error instead of running forever.
public struct PageTokens: Sendable {
    public let maximumPages: Int
    private var seen: Set<String> = []
    public private(set) var pages = 0
    let what: String

    /// `what` names the listing in errors ("the listing of versions").
    public init(_ what: String, maximumPages: Int = 20_000) {
        self.what = what
        self.maximumPages = maximumPages
    }

    /// Records one page and the token it gave for the next; returns that token, nil at the end.
    public mutating func next(_ token: String?) throws -> String? {
        pages += 1
        guard let token, !token.isEmpty else { return nil }
        guard seen.insert(token).inserted else {
            throw CloudFileSystemError.server(status: 200, message: "\(what) repeats the page token \(token.prefix(40)) after \(pages) pages; the server is looping")
        }
        guard pages < maximumPages else {
            throw CloudFileSystemError.server(status: 200, message: "\(what) goes on past \(maximumPages) pages; the server is not ending it")
        }
        return token
    }
}
