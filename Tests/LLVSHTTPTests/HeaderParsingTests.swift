import Foundation
@testable import LLVSHTTP
import Testing

/// Header lines and URL escaping, done on bytes because they run for every request: the same answers as the
/// Foundation calls they replace, on the lines servers send.
@Suite struct HeaderParsingTests {
    @Test func aFieldLosesTheBlanksAroundItsNameAndValue() {
        #expect(HTTPHeaders.field("Content-Type:  text/plain \t")! == ("Content-Type", "text/plain"))
        #expect(HTTPHeaders.field("X-Empty:")! == ("X-Empty", ""))
        #expect(HTTPHeaders.field("Location: http://host:8080/a:b")! == ("Location", "http://host:8080/a:b"))
        #expect(HTTPHeaders.field("X-Name: café ünïcode")! == ("X-Name", "café ünïcode"))
        #expect(HTTPHeaders.field("no colon here") == nil)
    }

    @Test func aLineLosesItsLineEnd() {
        for (raw, expected) in [("Date: x\r\n", "Date: x"), ("\r\n", ""), ("Date: x", "Date: x"), ("ETag: \"a\"\n", "ETag: \"a\"")] {
            let line = Array(raw.utf8).withUnsafeBytes { HTTPHeaders.trimmed($0) }
            #expect(line == expected)
        }
    }

    @Test func namesMatchWithoutRegardToASCIICase() {
        #expect(HTTPHeaders.sameName("content-length", "Content-Length"))
        #expect(HTTPHeaders.sameName("ETAG", "etag"))
        #expect(!HTTPHeaders.sameName("Content-Length", "Content-Lengtx"))
        #expect(!HTTPHeaders.sameName("ETag", "ETags"))
        // `[` and `{` differ only in the bit that folds letters' case; they are not letters, so they differ.
        #expect(!HTTPHeaders.sameName("X[", "X{"))
        var headers: HTTPHeaders = ["Retry-After": "2"]
        #expect(headers["retry-after"] == "2")
        headers["RETRY-AFTER"] = nil
        #expect(headers["Retry-After"] == nil)
    }

    @Test func escapingMatchesFoundationsForUnreservedCharacters() {
        let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
        let samples = ["plain-name_1.txt~", "a b/c?d#e%f+g&h=i", "café", "e\u{301}", "日本語", "🙂", "", "%41", "\u{7F}\u{1}"]
        for sample in samples {
            #expect(URLEscaping.escape(sample) == sample.addingPercentEncoding(withAllowedCharacters: unreserved), "\(sample)")
        }
    }
}
