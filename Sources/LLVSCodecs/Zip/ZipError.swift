import LLVSSupport
/// Why a zip archive (or one of its entries) could not be read or written, as cases a caller can switch on.
public enum ZipError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The file is not a zip archive, or its end records or central directory are damaged.
    case notAZip(path: String, reason: String)
    /// One entry is damaged: its local header, its data, its size or its CRC-32.
    case corruptEntry(path: String, entry: String, reason: String)
    /// The entry uses something this reader does not do (encryption, a compression method other than stored or deflate).
    case unsupported(path: String, entry: String, reason: String)
    /// zlib refused to compress (out of memory, or a state it should never reach).
    case deflateFailed(reason: String)

    public var description: String {
        switch self {
        case .notAZip(let path, let reason): "\(path) is not a readable zip archive: \(reason)"
        case .corruptEntry(let path, let entry, let reason): "the entry \(entry) of \(path) is damaged: \(reason)"
        case .unsupported(let path, let entry, let reason): "the entry \(entry) of \(path) cannot be read: \(reason)"
        case .deflateFailed(let reason): "zlib could not compress: \(reason)"
        }
    }
}
