import Foundation
import LLVSHTTP

/// A stored file's bytes in a mock: small ones in memory, large ones in a spooled file on disk.
public enum MockContent: Sendable {
    case data(Data)
    case spooled(URL, size: Int64)

    public var size: Int64 {
        switch self {
        case .data(let data): Int64(data.count)
        case .spooled(_, let size): size
        }
    }
}

extension MockContent {
    /// The content as an answer body, streamed from disk when spooled.
    public var body: MockResponse.Body {
        switch self {
        case .data(let data): .data(data)
        case .spooled(let url, _): .file(url, range: nil)
        }
    }

    /// A download of the content: whole, or the part a Range header asks for.
    public func response(range: String?, headers: HTTPHeaders = ["Content-Type": "application/octet-stream"]) -> MockResponse {
        .ranged(body, size: size, rangeHeader: range, headers: headers)
    }
}
