import Foundation
import LLVSSupport

extension Value {
    /// One entry of a version's changes, as LLVS encodes them: a one-key JSON object.
    public enum Change: Hashable, Sendable {
        /// A value that was absent before.
        case insert(Value)
        /// New data for a value that was present.
        case update(Value)
        /// The value is absent from now on.
        case remove(Value.ID)
        /// A merge kept the value stored earlier in another version.
        case preserve(Value.Reference)
        /// A merge kept the value absent.
        case preserveRemoval(Value.ID)

        /// The value the change is about.
        public var valueId: Value.ID {
            switch self {
            case .insert(let value), .update(let value): value.id
            case .remove(let id), .preserveRemoval(let id): id
            case .preserve(let reference): reference.valueId
            }
        }

        /// Bytes of new data this change carries (LLVS's `valueDataSize` counts only inserts and updates).
        public var dataSize: Int64 {
            switch self {
            case .insert(let value), .update(let value): Int64(value.data.count)
            case .remove, .preserve, .preserveRemoval: 0
            }
        }
    }
}

extension Array where Element == Value.Change {
    /// The sum of inserted and updated data sizes, as LLVS records in `Version.valueDataSize`.
    public var valueDataSize: Int64 { reduce(0) { $0 + $1.dataSize } }
}

extension Value.Change: Codable {
    enum CodingKeys: String, CodingKey { case insert, update, remove, preserve, preserveRemoval }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        // The keys are tried in LLVS's order.
        if let value = try container.decodeIfPresent(Value.self, forKey: .insert) {
            self = .insert(value)
        } else if let value = try container.decodeIfPresent(Value.self, forKey: .update) {
            self = .update(value)
        } else if let id = try container.decodeIfPresent(Value.ID.self, forKey: .remove) {
            self = .remove(id)
        } else if let reference = try container.decodeIfPresent(Value.Reference.self, forKey: .preserve) {
            self = .preserve(reference)
        } else if let id = try container.decodeIfPresent(Value.ID.self, forKey: .preserveRemoval) {
            self = .preserveRemoval(id)
        } else {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: decoder.codingPath,
                    debugDescription:
                        "a change must have one of the keys insert, update, remove, preserve, preserveRemoval"))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .insert(let value): try container.encode(value, forKey: .insert)
        case .update(let value): try container.encode(value, forKey: .update)
        case .remove(let id): try container.encode(id, forKey: .remove)
        case .preserve(let reference): try container.encode(reference, forKey: .preserve)
        case .preserveRemoval(let id): try container.encode(id, forKey: .preserveRemoval)
        }
    }
}
