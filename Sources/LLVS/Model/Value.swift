import Foundation
import LLVSSupport

/// A piece of data in a store, identified by a key, at some version.
///
/// `storedVersionId` names the version that stored this data; a value is stored once, in that version, and
/// later versions refer to it.
public struct Value: Hashable, Sendable, Codable, Identifiable {
    public struct ID: StringIdentifier {
        public let rawValue: String
        public init(_ rawValue: String) { self.rawValue = rawValue }
    }

    /// Where a value is kept: its key and the version that stored its data.
    public struct Reference: Hashable, Sendable, Codable {
        public var valueId: ID
        public var storedVersionId: Version.ID

        public init(valueId: ID, storedVersionId: Version.ID) {
            self.valueId = valueId
            self.storedVersionId = storedVersionId
        }
    }

    public var id: ID
    public var data: Data
    public var storedVersionId: Version.ID?

    public init(id: ID, data: Data, storedVersionId: Version.ID? = nil) {
        self.id = id
        self.data = data
        self.storedVersionId = storedVersionId
    }

    public init(id: String, data: Data) { self.init(id: ID(id), data: data) }

    public var reference: Reference? {
        storedVersionId.map { Reference(valueId: id, storedVersionId: $0) }
    }

    enum CodingKeys: String, CodingKey { case id, data, storedVersionId }
}
