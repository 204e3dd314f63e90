import Foundation
import LLVSSupport

/// The one error vocabulary of cloud file systems. Each connector maps its service's answers (status codes,
/// error reasons, result codes) to these cases at its boundary.
public enum CloudFileSystemError: Error, Equatable, Sendable, CustomStringConvertible {
    case notFound(path: String)
    case alreadyExists(path: String)
    case parentMissing(path: String)
    /// A folder where a file was expected, or a file where a folder was expected.
    case wrongKind(path: String, expectedFolder: Bool)
    case invalidPath(String)
    /// The credentials were refused, after any refresh; `message` says what to do (which command authorizes).
    case unauthorized(String)
    /// The service asked to slow down; `retryAfter` is how long, when it said.
    case rateLimited(retryAfter: Duration?)
    case quotaExceeded(String)
    /// A failure worth trying again: a dropped connection, a timeout, a 5xx the service calls temporary.
    case transient(String)
    /// The service failed in a way retrying will not fix.
    case server(status: Int, message: String)
    /// A local file the operation reads or writes failed.
    case localFile(path: String, message: String)
    /// A change feed's cursor the service no longer accepts (too old, reset), or one a watched folder's removal
    /// made meaningless: the caller lists in full instead.
    case cursorExpired(String)
    /// A file read into a region of a given length (`download(_:into:at:length:)`) had another length; `received` is
    /// at least one more than `expected` when it was longer, as reading stops there.
    case sizeMismatch(path: String, expected: Int64, received: Int64)
    /// An answer read into memory was longer than the read allows (`limit` bytes): read it into a file instead.
    case tooLargeForMemory(path: String, limit: Int)

    public var description: String {
        switch self {
        case .notFound(let path): "Nothing at \(path) on the remote."
        case .alreadyExists(let path): "Something is already at \(path) on the remote."
        case .parentMissing(let path): "The folder that should hold \(path) is missing on the remote."
        case .wrongKind(let path, let expectedFolder):
            "\(path) on the remote is \(expectedFolder ? "a file, not a folder" : "a folder, not a file")."
        case .invalidPath(let path): "\(path) is not a valid remote path (no empty, `.` or `..` components)."
        case .unauthorized(let message): "The remote refused the credentials: \(message)"
        case .rateLimited(let delay): "The remote asked to slow down\(delay.map { " for \($0)" } ?? "")."
        case .quotaExceeded(let message): "The remote's storage quota is exceeded: \(message)"
        case .transient(let message): "A temporary failure talking to the remote: \(message)"
        case .server(let status, let message): "The remote failed (status \(status)): \(message)"
        case .localFile(let path, let message): "The local file \(path) failed: \(message)"
        case .cursorExpired(let message): "The remote's change feed no longer accepts the saved position: \(message)"
        case .sizeMismatch(let path, let expected, let received):
            "\(path) on the remote holds \(received > expected ? "more than \(expected)" : "\(received)") bytes, where \(expected) were expected."
        case .tooLargeForMemory(let path, let limit):
            "\(path) on the remote is over the \(limit)-byte limit of a read into memory."
        }
    }

    /// True for the failures a retry may cure.
    public var isRetryable: Bool {
        switch self {
        case .rateLimited, .transient: true
        default: false
        }
    }
}
