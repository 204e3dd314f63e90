import Foundation

/// A stored file's bytes in a mock: small ones in memory, large ones in a spooled file on disk.
public enum MockContent: Sendable {
    case data(Data)
    case spooled(URL, size: Int64)

    public var size: Int64 {
        switch self {
        case .data(let data): Int64(data.count)
        case .spooled(_, let size): size
        }
    }
}
