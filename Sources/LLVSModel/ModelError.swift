import LLVS

/// Why a model could not be saved, read or merged.
public enum ModelError: Error, Equatable, CustomStringConvertible {
    /// A type identifier that is empty or holds `/` (it must be the last part of a value ID).
    case invalidTypeIdentifier(String)
    case emptyInstanceIdentifier(type: String)
    /// The value's JSON is not an instance of the type (written by another app's version of it, or damaged).
    case undecodable(valueId: Value.ID, type: String, reason: String)
    /// A JSON value this library cannot hold (a number beyond 64 bits, a document that is not JSON).
    case unreadableJSON(reason: String)

    public var description: String {
        switch self {
        case .invalidTypeIdentifier(let type):
            "The model type identifier \"\(type)\" is not usable: it must be non-empty and hold no \"/\""
        case .emptyInstanceIdentifier(let type):
            "A \(type) model needs a non-empty instance identifier"
        case .undecodable(let valueId, let type, let reason):
            "The value \(valueId) is not a \(type): \(reason)"
        case .unreadableJSON(let reason):
            "A model's JSON could not be read: \(reason)"
        }
    }
}
