import Foundation
import LLVSSupport
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
    public func response(
        range: String?, headers: HTTPHeaders = ["Content-Type": "application/octet-stream"]
    ) -> MockResponse {
        .ranged(body, size: size, rangeHeader: range, headers: headers)
    }
}

extension MockContent {
    /// A request body kept as stored contents: small ones in memory, spooled ones moved into `storage` (the server
    /// removes its spool files after answering).
    public static func keeping(_ body: IncomingRequest.Body, in storage: URL) throws -> MockContent {
        switch body {
        case .data(let data): return .data(data)
        case .file(let url, let size):
            let kept = storage.appendingPathComponent("content-\(UUID().uuidString)")
            try FileManager.default.moveItem(at: url, to: kept)
            return .spooled(kept, size: size)
        }
    }

    /// The checksums a service reports for these contents, in one read.
    public func checksums(_ algorithms: [ChecksumAlgorithm]) -> [ChecksumAlgorithm: String] {
        let streams = algorithms.map { ($0, ChecksumStream($0)) }
        switch self {
        case .data(let data): streams.forEach { $0.1.update(data) }
        case .spooled(let url, _):
            if let handle = try? FileHandle(forReadingFrom: url) {
                while let piece = try? handle.read(upToCount: 1 << 20), !piece.isEmpty {
                    streams.forEach { $0.1.update(piece) }
                }
                try? handle.close()
            }
        }
        return Dictionary(uniqueKeysWithValues: streams.map { ($0.0, $0.1.finalize()) })
    }
}
