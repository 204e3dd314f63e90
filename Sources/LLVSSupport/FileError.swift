#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A file system call that failed, or a file that is not what its reader was promised, named by its path so a
/// message can say where. The store's own errors (`StoreError`) are about what files mean; these are about files.
public enum FileError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A system call on `path` failed with `errno`.
    case io(path: String, operation: String, errno: Int32)
    /// A read of a known range found the file shorter.
    case endedEarly(path: String, reason: String)
    /// A file being copied changed size or content while it was read.
    case changedWhileRead(path: String)

    public var description: String {
        switch self {
        case .io(let path, let operation, let code):
            "Could not \(operation) \(path): \(String(cString: strerror(code)))."
        case .endedEarly(let path, let reason): "The file \(path) is corrupt: \(reason)."
        case .changedWhileRead(let path): "The file \(path) changed while it was being read."
        }
    }

    /// The path the error names.
    public var path: String {
        switch self {
        case .io(let path, _, _), .endedEarly(let path, _), .changedWhileRead(let path): path
        }
    }
}
