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
        guard contentType.lowercased().hasPrefix("multipart/related") else { return nil }
        return MultipartParts.parse(body, contentType: contentType)?.map {
            Part(contentType: $0.headers["content-type"] ?? "application/octet-stream", data: $0.data)
        }
    }
}

/// The parts of any `multipart/*` body (RFC 2046) with their headers, for servers and mocks that read
/// `multipart/related` and `multipart/form-data` uploads.
public enum MultipartParts {
    public struct Part: Sendable {
        /// Header names in lower case.
        public var headers: [String: String]
        public var data: Data

        /// `name` and `filename` from a form part's Content-Disposition.
        public func dispositionParameter(_ parameter: String) -> String? {
            guard let disposition = headers["content-disposition"] else { return nil }
            for piece in disposition.split(separator: ";").dropFirst() {
                let pair = piece.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                guard pair.count == 2, pair[0].lowercased() == parameter else { continue }
                var value = pair[1]
                if value.hasPrefix("\""), value.hasSuffix("\""), value.count >= 2 {
                    value = String(value.dropFirst().dropLast())
                }
                return value
            }
            return nil
        }
    }

    /// The boundary named in a Content-Type, unquoted.
    public static func boundary(_ contentType: String) -> String? {
        guard let range = contentType.range(of: "boundary=") else { return nil }
        var boundary = String(contentType[range.upperBound...].prefix { $0 != ";" }).trimmingCharacters(
            in: .whitespaces)
        if boundary.hasPrefix("\""), boundary.hasSuffix("\""), boundary.count >= 2 {
            boundary = String(boundary.dropFirst().dropLast())
        }
        return boundary.isEmpty ? nil : boundary
    }

    /// The parts in order; nil when the body is not well formed. Lines end in CRLF as RFC 2046 says, or in LF alone
    /// (what Google's Python client writes, and Drive accepts): the style after the first delimiter is the body's.
    public static func parse(_ body: Data, contentType: String) -> [Part]? {
        guard contentType.lowercased().hasPrefix("multipart/"), let boundary = boundary(contentType) else { return nil }
        let delimiter = Data("--\(boundary)".utf8)
        var parts: [Part] = []
        guard var cursor = body.range(of: delimiter)?.upperBound else { return nil }
        let newline = body[cursor...].starts(with: Data("\r\n".utf8)) ? Data("\r\n".utf8) : Data("\n".utf8)
        while true {
            // After a delimiter: "--" ends the body, a line break starts a part.
            if body[cursor...].starts(with: Data("--".utf8)) { return parts }
            guard body[cursor...].starts(with: newline) else { return nil }
            let partStart = cursor + newline.count
            guard let next = body.range(of: newline + delimiter, in: partStart..<body.endIndex) else { return nil }
            let part = body[partStart..<next.lowerBound]
            let headerEnd: Range<Data.Index>
            if part.starts(with: newline) {
                headerEnd = part.startIndex..<(part.startIndex + newline.count)  // a part without headers
            } else {
                guard let end = part.range(of: newline + newline) else { return nil }
                headerEnd = end
            }
            var headers: [String: String] = [:]
            let lines = String(decoding: part[part.startIndex..<headerEnd.lowerBound], as: UTF8.self).split(
                whereSeparator: { $0 == "\n" || $0 == "\r\n" })
            for line in lines {
                let pieces = line.split(separator: ":", maxSplits: 1)
                if pieces.count == 2 {
                    headers[pieces[0].trimmingCharacters(in: .whitespaces).lowercased()] = pieces[1].trimmingCharacters(
                        in: .whitespacesAndNewlines)
                }
            }
            parts.append(Part(headers: headers, data: Data(part[headerEnd.upperBound...])))
            cursor = next.upperBound
        }
    }
}
