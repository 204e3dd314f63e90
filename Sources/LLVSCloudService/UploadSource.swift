import Foundation
import LLVS
import LLVSHTTP

/// An upload's bytes as HTTP request bodies and form parts, streamed by libcurl from a file.
extension UploadSource {
    /// The whole source as a request body, streamed from a file.
    public var body: HTTPRequestBody {
        switch self {
        case .data(let data): .data(data)
        case .file(let url, let size), .staged(let url, let size): .file(url, offset: 0, length: size)
        }
    }

    /// Bytes `offset ..< offset + length` as a request body.
    public func body(offset: Int64, length: Int64) -> HTTPRequestBody {
        switch self {
        case .data(let data): .data(data.subdata(in: Int(offset)..<Int(offset + length)))
        case .file(let url, _), .staged(let url, _): .file(url, offset: offset, length: length)
        }
    }

    /// The source as a form part (streamed by libcurl from a file).
    public func formPart(name: String, filename: String?, contentType: String? = "application/octet-stream") -> FormPart
    {
        switch self {
        case .data(let data): FormPart(name: name, filename: filename, contentType: contentType, content: .data(data))
        case .file(let url, _), .staged(let url, _):
            FormPart(name: name, filename: filename, contentType: contentType, content: .file(url))
        }
    }
}
