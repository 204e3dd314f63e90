import Foundation
@testable import LLVSHTTP
import Testing

/// Header lines and URL escaping, done on bytes because they run for every request: the same answers as the
/// Foundation calls they replace, on the lines servers send.
@Suite struct HeaderParsingTests {
    private func line(_ raw: String) -> HTTPHeaders.Line { Array(raw.utf8).withUnsafeBytes { HTTPHeaders.line($0) } }

    @Test func aFieldLosesTheBlanksAroundItsNameAndValueAndItsLineEnd() {
        #expect(line("Content-Type:  text/plain \t\r\n") == .field(name: "Content-Type", value: "text/plain"))
        #expect(line("X-Empty:\r\n") == .field(name: "X-Empty", value: ""))
        #expect(line("Location: http://host:8080/a:b") == .field(name: "Location", value: "http://host:8080/a:b"))
        #expect(line("X-Name: café ünïcode\n") == .field(name: "X-Name", value: "café ünïcode"))
        #expect(line("ETag: \"a\"\n") == .field(name: "ETag", value: "\"a\""))
        #expect(line("no colon here\r\n") == .other)
        #expect(line("\r\n") == .other)
    }

    @Test func aStatusLineGivesItsCode() {
        #expect(line("HTTP/1.1 200 OK\r\n") == .status(200))
        #expect(line("HTTP/2 207\r\n") == .status(207))
        #expect(line("HTTP/1.1 100 Continue\r\n") == .status(100))
        #expect(line("HTTP/1.1 401 Unauthorized: no\r\n") == .status(401))
        // A status line whose code is missing or not a number gives 0, as libcurl's own answer code then decides.
        #expect(line("HTTP/1.1\r\n") == .status(0))
        #expect(line("HTTP/1.1 abc\r\n") == .status(0))
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
        let unreserved = CharacterSet(
            charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
        let samples = [
            "plain-name_1.txt~", "a b/c?d#e%f+g&h=i", "café", "e\u{301}", "日本語", "🙂", "", "%41", "\u{7F}\u{1}",
        ]
        for sample in samples {
            #expect(
                URLEscaping.escape(sample) == sample.addingPercentEncoding(withAllowedCharacters: unreserved),
                "\(sample)")
        }
    }
}

/// JSON in a header: printable ASCII stays, every other character becomes `\uXXXX` of its UTF-16 units.
@Suite struct HeaderSafeJSONTests {
    @Test func everyCharacterOutsidePrintableASCIIIsEscaped() throws {
        let json = "{\"path\":\"/ünï/😀\u{7f}\"}"
        let escaped = HeaderSafeJSON.escape(json)
        #expect(escaped == #"{"path":"/\u00fcn\u00ef/\ud83d\ude00\u007f"}"#)
        #expect(HeaderSafeJSON.isSafe(escaped) && !HeaderSafeJSON.isSafe(json))
        let decoded = try JSONSerialization.jsonObject(with: Data(escaped.utf8)) as? [String: String]
        #expect(decoded == ["path": "/ünï/😀\u{7f}"])
    }
}
