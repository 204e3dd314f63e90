import Foundation
import LLVS
import LLVSCloudService
import Testing

/// The bounds every paged read has: a hostile or broken server ends in an error, a real large listing does not.
@Suite struct PageTokensTests {
    @Test func endlessEmptyPagesWithNewTokensEndAfterAHundred() throws {
        var tokens = PageTokens("the test listing")
        var pages = 0
        #expect(throws: CloudFileSystemError.self) {
            while true {
                pages += 1
                _ = try tokens.next("token-\(pages)", items: 0)
            }
        }
        #expect(pages == 100, "\(pages) pages")
    }

    @Test func aRealLargeListingWithSomeEmptyPagesGoesThrough() throws {
        var tokens = PageTokens("the test listing")
        // 15,000 pages (15 million entries at 1,000 a page), with runs of up to 99 empty pages between full ones.
        for page in 1..<15_000 {
            let token = try tokens.next("token-\(page)", items: page % 100 == 0 ? 1_000 : 0)
            #expect(token == "token-\(page)")
        }
        #expect(try tokens.next(nil, items: 3) == nil)
    }

    @Test func aRepeatedTokenIsALoop() throws {
        var tokens = PageTokens("the test listing")
        _ = try tokens.next("a", items: 5)
        _ = try tokens.next("b", items: 5)
        #expect(throws: CloudFileSystemError.self) { try tokens.next("a", items: 5) }
    }

    @Test func pagesFullOfItemsEndAtTheBound() throws {
        var tokens = PageTokens("the test listing", maximumPages: 50)
        #expect(throws: CloudFileSystemError.self) {
            for page in 1...60 { _ = try tokens.next("token-\(page)", items: 10) }
        }
        #expect(tokens.pages == 50)
    }
}
