import Foundation
import LLVSHTTP

/// An answer a mock gives. File bodies are streamed from disk, so a mock can serve a 1 GiB download.
public struct MockResponse: Sendable {
    public enum Body: Sendable {
        case data(Data)
        case file(URL, range: Range<Int64>?)
    }

    public var status: Int
    public var headers: HTTPHeaders
    public var body: Body

    public init(status: Int, headers: HTTPHeaders = [:], body: Body = .data(Data())) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    public static func empty(_ status: Int, headers: HTTPHeaders = [:]) -> MockResponse {
        MockResponse(status: status, headers: headers)
    }

    public static func text(
        _ status: Int, _ text: String, contentType: String = "text/plain; charset=utf-8"
    ) -> MockResponse {
        MockResponse(status: status, headers: ["Content-Type": contentType], body: .data(Data(text.utf8)))
    }

    /// A JSON answer; keys sorted only when asked (sorting costs most of the time of a large answer).
    public static func json(_ status: Int, _ object: Any, sortedKeys: Bool = false) -> MockResponse {
        let data =
            MockJSON.data(object, sortedKeys: sortedKeys)
            ?? (try? JSONSerialization.data(withJSONObject: object, options: sortedKeys ? [.sortedKeys] : []))
            ?? Data("{}".utf8)
        return MockResponse(
            status: status, headers: ["Content-Type": "application/json; charset=utf-8"], body: .data(data))
    }

    public static func json<T: Encodable>(_ status: Int, encoding value: T) -> MockResponse {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let data = (try? encoder.encode(value)) ?? Data("{}".utf8)
        return MockResponse(
            status: status, headers: ["Content-Type": "application/json; charset=utf-8"], body: .data(data))
    }

    /// A whole resource of `size` bytes, or the part a Range header asks for (206), or 416 when it cannot be met.
    /// Supports `bytes=a-b`, `bytes=a-` and `bytes=-n`, as real services do.
    public static func ranged(
        _ body: Body, size: Int64, rangeHeader: String?, headers: HTTPHeaders = [:]
    ) -> MockResponse {
        var headers = headers
        headers["Accept-Ranges"] = "bytes"
        guard let rangeHeader, let range = parseRange(rangeHeader, size: size) else {
            if rangeHeader != nil, parseRange(rangeHeader!, size: size) == nil, rangeHeader!.hasPrefix("bytes=") {
                headers["Content-Range"] = "bytes */\(size)"
                return MockResponse(status: 416, headers: headers)
            }
            return MockResponse(status: 200, headers: headers, body: body)
        }
        headers["Content-Range"] = "bytes \(range.lowerBound)-\(range.upperBound - 1)/\(size)"
        switch body {
        case .data(let data):
            return MockResponse(
                status: 206, headers: headers,
                body: .data(data.subdata(in: Int(range.lowerBound)..<Int(range.upperBound))))
        case .file(let url, _):
            return MockResponse(status: 206, headers: headers, body: .file(url, range: range))
        }
    }

    static func parseRange(_ header: String, size: Int64) -> Range<Int64>? {
        guard header.hasPrefix("bytes="), !header.contains(",") else { return nil }
        let spec = header.dropFirst(6)
        let parts = spec.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false).map {
            String($0).trimmingCharacters(in: .whitespaces)
        }
        guard parts.count == 2 else { return nil }
        if parts[0].isEmpty {
            guard let n = Int64(parts[1]), n > 0, size > 0 else { return nil }
            return max(0, size - n)..<size
        }
        guard let start = Int64(parts[0]), start < size else { return nil }
        if parts[1].isEmpty { return start..<size }
        guard let end = Int64(parts[1]), end >= start else { return nil }
        return start..<min(end + 1, size)
    }

    var bodyLength: Int64 {
        switch body {
        case .data(let data): Int64(data.count)
        case .file(let url, let range):
            range.map { $0.upperBound - $0.lowerBound }
                ?? ((try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int64) ?? 0)
        }
    }
}
