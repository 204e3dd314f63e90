import Foundation
import LLVS
import LLVSHTTP

/// What an upload sends: bytes in memory or a local file, streamed in whole or in pieces.
enum UploadSource: Sendable {
    case data(Data)
    case file(URL, size: Int64)

    /// A readable local file; its size is taken now, so a file that changes under the upload is caught by the
    /// size check afterwards.
    init(file: URL) throws {
        guard FileManager.default.isReadableFile(atPath: file.path),
              let attributes = try? FileManager.default.attributesOfItem(atPath: file.path),
              (attributes[.type] as? FileAttributeType) == .typeRegular else {
            throw CloudFileSystemError.localFile(path: file.path, message: "it is missing, unreadable or not a regular file")
        }
        self = .file(file, size: (attributes[.size] as? Int64) ?? Int64((attributes[.size] as? Int) ?? 0))
    }

    var size: Int64 {
        switch self {
        case .data(let data): Int64(data.count)
        case .file(_, let size): size
        }
    }

    var body: HTTPRequestBody {
        switch self {
        case .data(let data): .data(data)
        case .file(let url, let size): .file(url, offset: 0, length: size)
        }
    }

    func body(offset: Int64, length: Int64) -> HTTPRequestBody {
        switch self {
        case .data(let data): .data(data.subdata(in: Int(offset)..<Int(offset + length)))
        case .file(let url, _): .file(url, offset: offset, length: length)
        }
    }

    /// The whole contents in memory; only for sources under the multipart limit.
    func data() throws -> Data {
        switch self {
        case .data(let data): return data
        case .file(let url, _):
            do { return try Data(contentsOf: url) } catch {
                throw CloudFileSystemError.localFile(path: url.path, message: error.localizedDescription)
            }
        }
    }
}
