import Foundation
import LLVSSupport

/// A file being written, piece by piece, to be sent as `UploadSource.staged`. A file system
/// that transforms what it sends (encryption) transforms each piece as it is written, so a large file the caller
/// makes for one upload (a version's encoded changes) is written to disk once, already in its final form.
public protocol StagedFileWriter: AnyObject {
    func write(_ data: Data) throws
    /// Completes the file; nothing is written after.
    func finish() throws
}

/// How a file system stages files for one remote path: it makes a writer for a local file. Taken once per upload
/// (asynchronously: a layer may need its key first), then used synchronously by an encoder that decides on its own
/// whether it needs a file at all.
public struct FileStager: Sendable {
    public let makeWriter: @Sendable (URL) throws -> any StagedFileWriter

    public init(makeWriter: @escaping @Sendable (URL) throws -> any StagedFileWriter) {
        self.makeWriter = makeWriter
    }

    /// Writes the bytes as they are.
    public static let plain = FileStager { try PlainStagedFileWriter(url: $0) }
}

/// A staged file holding exactly the bytes written.
public final class PlainStagedFileWriter: StagedFileWriter {
    private let handle: FileHandle
    private let url: URL

    public init(url: URL) throws {
        self.url = url
        handle = try POSIX.createFile(url.path)
    }

    deinit { try? handle.close() }

    public func write(_ data: Data) throws {
        do { try handle.write(contentsOf: data) } catch {
            throw FileError.io(path: url.path, operation: "write", errno: EIO)
        }
    }

    public func finish() throws { try? handle.close() }
}
