import Foundation

/// A `multipart/related` body (RFC 2387), as upload APIs take metadata and content in one request: each part with
/// its own Content-Type, separated by a random boundary that appears in no part.
public struct MultipartRelated: Sendable {
    public struct Part: Sendable {
        public var contentType: String
        public var data: Data
        public init(contentType: String, data: Data) {
            self.contentType = contentType
            self.data = data
        }
    }

    public let boundary: String
    public let parts: [Part]

    public init(parts: [Part]) {
        self.parts = parts
        var boundary: String
        repeat {
            boundary = "llvs-" + PKCE.base64URL(PKCE.randomBytes(24)).replacingOccurrences(of: "_", with: "0")
        } while parts.contains { $0.data.range(of: Data(boundary.utf8)) != nil }
        self.boundary = boundary
    }

    /// The value of the request's Content-Type header.
    public var contentType: String { "multipart/related; boundary=\(boundary)" }

    public var body: Data {
        var body = Data()
        for part in parts {
            body.append(Data("--\(boundary)\r\nContent-Type: \(part.contentType)\r\n\r\n".utf8))
            body.append(part.data)
            body.append(Data("\r\n".utf8))
        }
        body.append(Data("--\(boundary)--\r\n".utf8))
        return body
    }

    /// Splits a body back into its parts, for servers and mocks; nil when it is not well formed.
    public static func parse(_ body: Data, contentType: String) -> [Part]? {
        guard contentType.lowercased().hasPrefix("multipart/related"),
              let boundaryRange = contentType.range(of: "boundary=") else { return nil }
        var boundary = String(contentType[boundaryRange.upperBound...].prefix { $0 != ";" }).trimmingCharacters(in: .whitespaces)
        if boundary.hasPrefix("\""), boundary.hasSuffix("\""), boundary.count >= 2 { boundary = String(boundary.dropFirst().dropLast()) }
        guard !boundary.isEmpty else { return nil }
        let delimiter = Data("--\(boundary)".utf8)
        var parts: [Part] = []
        guard var cursor = body.range(of: delimiter)?.upperBound else { return nil }
        while true {
            // After a delimiter: "--" ends the body, CRLF starts a part.
            if body[cursor...].starts(with: Data("--".utf8)) { return parts }
            guard body[cursor...].starts(with: Data("\r\n".utf8)) else { return nil }
            let partStart = cursor + 2
            guard let next = body.range(of: Data("\r\n".utf8) + delimiter, in: partStart..<body.endIndex) else { return nil }
            let part = body[partStart..<next.lowerBound]
            guard let headerEnd = part.range(of: Data("\r\n\r\n".utf8)) else { return nil }
            let headerText = String(decoding: part[part.startIndex..<headerEnd.lowerBound], as: UTF8.self)
            var type = "application/octet-stream"
            for line in headerText.split(separator: "\r\n") {
                let pieces = line.split(separator: ":", maxSplits: 1)
                if pieces.count == 2, pieces[0].trimmingCharacters(in: .whitespaces).lowercased() == "content-type" {
                    type = pieces[1].trimmingCharacters(in: .whitespaces)
                }
            }
            parts.append(Part(contentType: type, data: Data(part[headerEnd.upperBound...])))
            cursor = next.upperBound
        }
    }
}
