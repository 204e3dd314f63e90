import Foundation
import LLVSSupport

/// What an upload sends: bytes in memory or a local file, streamed in whole or in pieces, never loaded whole
/// except where a service's small-upload request needs it in one body.
public enum UploadSource: Sendable {
    case data(Data)
    case file(URL, size: Int64)
    /// A local file the file system's own `stager(for:)` wrote for this upload, perhaps already transformed
    /// (sealed): a wrapper that transforms what it sends passes it on as it is. The caller removes it afterwards.
    case staged(URL, size: Int64)

    /// A readable local file; its size is taken now, so a file that changes under the upload is caught by the
    /// size check afterwards.
    public init(file: URL) throws {
        guard FileManager.default.isReadableFile(atPath: file.path),
            let attributes = try? FileManager.default.attributesOfItem(atPath: file.path),
            (attributes[.type] as? FileAttributeType) == .typeRegular
        else {
            throw CloudFileSystemError.localFile(
                path: file.path, message: "it is missing, unreadable or not a regular file")
        }
        self = .file(file, size: (attributes[.size] as? NSNumber)?.int64Value ?? 0)
    }

    /// A file `stager(for:)` wrote, with its size taken now.
    public init(staged file: URL) throws {
        self = .staged(file, size: try UploadSource(file: file).size)
    }

    /// The local file the bytes come from; nil for bytes in memory.
    public var fileURL: URL? {
        switch self {
        case .data: nil
        case .file(let url, _), .staged(let url, _): url
        }
    }

    public var size: Int64 {
        switch self {
        case .data(let data): Int64(data.count)
        case .file(_, let size), .staged(_, let size): size
        }
    }

    /// Bytes `offset ..< offset + length` in memory: one piece of a chunked upload, where a service wants a digest
    /// of each piece.
    public func data(offset: Int64, length: Int64) throws -> Data {
        switch self {
        case .data(let data): return data.subdata(in: Int(offset)..<Int(offset + length))
        case .file(let url, _), .staged(let url, _):
            do {
                let handle = try FileHandle(forReadingFrom: url)
                defer { try? handle.close() }
                try handle.seek(toOffset: UInt64(offset))
                let piece = try handle.read(upToCount: Int(length)) ?? Data()
                guard piece.count == Int(length) else {
                    throw CloudFileSystemError.localFile(
                        path: url.path,
                        message:
                            "it ended at \(offset + Int64(piece.count)) bytes, before the \(offset + length) expected")
                }
                return piece
            } catch let error as CloudFileSystemError {
                throw error
            } catch {
                throw CloudFileSystemError.localFile(path: url.path, message: error.localizedDescription)
            }
        }
    }

    /// The whole contents in memory; only for sources under a service's small-upload limit.
    public func data() throws -> Data { try data(offset: 0, length: size) }

    /// The checksum of everything the source holds, hashed as it is read.
    public func checksum(_ algorithm: ChecksumAlgorithm) throws -> String {
        try checksums([algorithm])[algorithm]!
    }

    /// Several checksums in one read of the source.
    public func checksums(_ algorithms: Set<ChecksumAlgorithm>) throws -> [ChecksumAlgorithm: String] {
        let streams = algorithms.map { ($0, ChecksumStream($0)) }
        switch self {
        case .data(let data):
            streams.forEach { $0.1.update(data) }
        case .file(let url, _), .staged(let url, _):
            do {
                let handle = try FileHandle(forReadingFrom: url)
                defer { try? handle.close() }
                while let piece = try handle.read(upToCount: 1 << 20), !piece.isEmpty {
                    streams.forEach { $0.1.update(piece) }
                }
            } catch {
                throw CloudFileSystemError.localFile(path: url.path, message: error.localizedDescription)
            }
        }
        return Dictionary(uniqueKeysWithValues: streams.map { ($0.0, $0.1.finalize()) })
    }
}

extension UploadSource {
    /// Checks a service's own account of what it stored against what was sent: the size, and every checksum it
    /// reported (hashed in one more read of the source). A mismatch is a server failure naming the service and path.
    public func verify(
        storedSize: Int64?, checksums reported: [ChecksumAlgorithm: String], service: String, path: String
    ) throws {
        if let storedSize, storedSize != size {
            throw CloudFileSystemError.server(
                status: 200, message: "\(service) stored \(storedSize) bytes for \(path), not the \(size) sent")
        }
        guard !reported.isEmpty else { return }
        let computed = try checksums(Set(reported.keys))
        for (algorithm, value) in reported.sorted(by: { $0.key.rawValue < $1.key.rawValue })
        where !algorithm.matches(value, computed[algorithm] ?? "") {
            throw CloudFileSystemError.server(
                status: 200, message: "\(service)'s \(algorithm) of \(path) does not match the data sent")
        }
    }
}
