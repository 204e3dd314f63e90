import Foundation
import LLVSSupport

/// A piece of data in a store, identified by a key, at some version.
///
/// `storedVersionId` names the version that stored this data; a value is stored once, in that version, and
/// later versions refer to it.
public struct Value: Hashable, Sendable, Codable, Identifiable {
    /// A value's identifier, chosen by the app; `/` is allowed (`notes/today`).
    public struct ID: StringIdentifier {
        public let rawValue: String
        public init(_ rawValue: String) { self.rawValue = rawValue }
    }

    /// Where a value is kept: its key and the version that stored its data.
    public struct Reference: Hashable, Sendable, Codable {
        /// The value.
        public var valueId: ID
        /// The version that stored the data this reference names.
        public var storedVersionId: Version.ID

        public init(valueId: ID, storedVersionId: Version.ID) {
            self.valueId = valueId
            self.storedVersionId = storedVersionId
        }
    }

    /// The value's identifier.
    public var id: ID
    /// The value's bytes.
    public var data: Data
    /// The version that stored these bytes, when the value was read from a store; nil for a value about to be saved.
    public var storedVersionId: Version.ID?

    public init(id: ID, data: Data, storedVersionId: Version.ID? = nil) {
        self.id = id
        self.data = data
        self.storedVersionId = storedVersionId
    }

    /// A value with an ID given as a string.
    public init(id: String, data: Data) { self.init(id: ID(id), data: data) }

    /// Where the value's data is stored, when it was read from a store.
    public var reference: Reference? {
        storedVersionId.map { Reference(valueId: id, storedVersionId: $0) }
    }

    enum CodingKeys: String, CodingKey { case id, data, storedVersionId }
}
