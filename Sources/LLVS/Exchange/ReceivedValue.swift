import Foundation
import LLVSCodecs
import LLVSSupport

/// A received value in its stored form (`StoredRecord`): compressed values arrive compressed and are kept so,
/// after a check that they decode to the size they claim.
public struct ReceivedValue: Sendable {
    /// Where the stored bytes are: small ones in memory, large ones in a temporary file.
    public enum Bytes: Sendable {
        case data(Data)
        case file(URL)
        /// None: the sender's prune released them (`ReleasedRecordList`); the value keeps its place and size.
        case released
    }

    public var id: Value.ID
    public var isUpdate: Bool
    /// How many bytes the value holds (decoded).
    public var size: Int64
    public var encoding: RecordEncoding
    public var bytes: Bytes

    public init(id: Value.ID, isUpdate: Bool, size: Int64, encoding: RecordEncoding, bytes: Bytes) {
        self.id = id
        self.isUpdate = isUpdate
        self.size = size
        self.encoding = encoding
        self.bytes = bytes
    }

    /// Removes the temporary file, if there is one.
    public func discard() {
        if case .file(let url) = bytes { try? FileManager.default.removeItem(at: url) }
    }
}

extension ReceivedValue {
    /// Checks that the bytes decode to `size` bytes (a remote's word is not taken for it), then stores them as they
    /// are. A value whose compressed form is no smaller than the value is stored decoded: a store never keeps a
    /// compressed record larger than its data.
    func store(with writer: any VersionWriter, in version: Version.ID) throws -> RecordLocation {
        func invalid(_ error: ZstdError) -> StoreError {
            .invalidChanges(version, reason: "value \(id): \(error)")
        }
        switch bytes {
        case .released:
            // An empty record holds the value's place; the caller lists it as released.
            return try writer.append(Data(), zone: .values)
        case .data(let data):
            let decoded: Data
            do { decoded = try StoredRecord(bytes: data, encoding: encoding).decoded(size: size) } catch let error
                as ZstdError
            {
                throw invalid(error)
            }
            if encoding == .zstd, data.count < decoded.count {
                return try writer.append(StoredRecord(bytes: data, encoding: .zstd), zone: .values)
            }
            return try writer.append(decoded, zone: .values)
        case .file(let url):
            let length = try ReadableFile(path: url.path).size
            guard encoding == .zstd else {
                guard length == size else { throw invalid(.sizeMismatch(expected: size, found: length)) }
                return try writer.appendValue(contentsOf: url, digest: nil).0
            }
            do {
                let decoder = try ZstdStreamDecoder(expectedSize: size)
                try ReadableFile(path: url.path).forEachPiece { try decoder.feed($0) { _ in } }
                try decoder.finish { _ in }
            } catch let error as ZstdError {
                throw invalid(error)
            }
            guard length < size else {
                throw StoreError.invalidChanges(
                    version, reason: "value \(id): its compressed form (\(length) bytes) is larger than the value")
            }
            return try writer.append(contentsOf: url, zone: .values, encoding: .zstd, digest: nil)
        }
    }
}
