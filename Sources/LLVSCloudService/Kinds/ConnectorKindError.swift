import Foundation

/// What stops a kind from making a remote's file system, phrased for the user: the command line shows it as it
/// shows its own errors (a usage error with the command's usage line and exit 2, a failure with exit 1).
public enum ConnectorKindError: Error, Equatable, CustomStringConvertible {
    /// A URL, option or account that cannot be used as given.
    case usage(String)
    /// Anything else, such as a token file that cannot be read.
    case failed(String)

    public var description: String {
        switch self {
        case .usage(let message), .failed(let message): message
        }
    }
}
