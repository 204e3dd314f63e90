import Foundation
import LLVS

/// Follows a listing's page tokens (Drive's `nextPageToken`, Box's markers, Graph's `@odata.nextLink`) with bounds,
/// so a hostile or broken server ends a listing with an error within minutes instead of running until the command's
/// deadline:
/// - a token seen before: the server is looping;
/// - `maximumEmptyPages` pages in a row with nothing on them: services may answer a page with no items and a token
///   for the next (Drive says so of filtered queries), but never page after page; a server that hands out a new
///   token forever with nothing on it is caught after 100 pages (seconds), where the page bound alone took minutes;
/// - more than `maximumPages` pages: 20,000 pages of the 100–1,000 items each service pages by is 2 to 20 million
///   entries, beyond any folder or feed a store has, and it bounds what a listing can hold in memory.
public struct PageTokens: Sendable {
    public let maximumPages: Int
    public let maximumEmptyPages: Int
    private var seen: Set<String> = []
    public private(set) var pages = 0
    private var emptyInARow = 0
    let what: String

    /// `what` names the listing in errors ("the listing of versions").
    public init(_ what: String, maximumPages: Int = 20_000, maximumEmptyPages: Int = 100) {
        self.what = what
        self.maximumPages = maximumPages
        self.maximumEmptyPages = maximumEmptyPages
    }

    /// Records one page, with how many items it held, and the token it gave for the next; returns that token, nil at
    /// the end.
    public mutating func next(_ token: String?, items: Int) throws -> String? {
        pages += 1
        guard let token, !token.isEmpty else { return nil }
        guard seen.insert(token).inserted else {
            throw CloudFileSystemError.server(
                status: 200,
                message:
                    "\(what) repeats the page token \(token.prefix(40)) after \(pages) pages; the server is looping")
        }
        emptyInARow = items == 0 ? emptyInARow + 1 : 0
        guard emptyInARow < maximumEmptyPages else {
            throw CloudFileSystemError.server(
                status: 200,
                message:
                    "\(what) gave \(emptyInARow) pages in a row with nothing on them, each with a new token; the server is not ending it"
            )
        }
        guard pages < maximumPages else {
            throw CloudFileSystemError.server(
                status: 200, message: "\(what) goes on past \(maximumPages) pages; the server is not ending it")
        }
        return token
    }
}
