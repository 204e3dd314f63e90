import Foundation
import LLVSSupport

/// One saved state of a store: an identifier, up to two predecessors, a time and free-form metadata.
///
/// The JSON encoding is LLVS's, so version files written on Apple devices and here are interchangeable
/// (see `docs/remote-format.md`).
public struct Version: Hashable, Sendable, Identifiable {
    /// A version's identifier: a UUID string for versions made here, any file-name-safe string from elsewhere.
    public struct ID: StringIdentifier {
        public let rawValue: String
        public init(_ rawValue: String) { self.rawValue = rawValue }
        /// A new random identifier, as LLVS makes them (an uppercase UUID string).
        public static func random() -> ID { ID(UUID.drawn().uuidString) }
    }

    /// The versions this one was made from: one for an ordinary save, two for a merge.
    public struct Predecessors: Hashable, Sendable, Codable {
        /// The version this one was made on (for a merge, the side it was made from).
        public var idOfFirst: ID
        /// The other side of a merge; nil for an ordinary version.
        public var idOfSecond: ID?

        public init(idOfFirst: ID, idOfSecond: ID? = nil) {
            self.idOfFirst = idOfFirst
            self.idOfSecond = idOfSecond
        }

        /// The one or two predecessors, first first.
        public var ids: [ID] { idOfSecond.map { [idOfFirst, $0] } ?? [idOfFirst] }
    }

    /// This version's identifier.
    public var id: ID
    /// The versions this one was made on; nil for a first version.
    public var predecessors: Predecessors?
    /// Seconds since 2001-01-01 00:00:00 UTC, as Foundation's reference date.
    public var timestamp: TimeInterval
    /// The sum of the data sizes of the values inserted and updated in this version; nil when a file lacked it.
    public var valueDataSize: Int64?
    /// What an app recorded with the version (a branch name, a message), by key.
    public var metadata: Metadata

    public init(
        id: ID = .random(), predecessors: Predecessors? = nil,
        timestamp: TimeInterval = Date().timeIntervalSinceReferenceDate,
        valueDataSize: Int64? = nil, metadata: Metadata = [:]
    ) {
        self.id = id
        self.predecessors = predecessors
        self.timestamp = timestamp
        self.valueDataSize = valueDataSize
        self.metadata = metadata
    }

    /// When the version was made, from its timestamp.
    public var date: Date { Date(timeIntervalSinceReferenceDate: timestamp) }

    /// The branch this version was saved on, from the `__llvs_branch` metadata key.
    public var branch: Branch? {
        guard let value = metadata[.branch] else { return nil }
        return (try? value.decoded(String.self)).map { Branch($0) }
    }

    /// Whether the version merged two others.
    public var isMerge: Bool { predecessors?.idOfSecond != nil }
}

extension Version: Codable {
    enum CodingKeys: String, CodingKey {
        case identifier, predecessors, timestamp, valueDataSize, metadata
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(ID.self, forKey: .identifier)
        predecessors = try container.decodeIfPresent(Predecessors.self, forKey: .predecessors)
        timestamp = try container.decode(TimeInterval.self, forKey: .timestamp)
        valueDataSize = try container.decodeIfPresent(Int64.self, forKey: .valueDataSize)
        metadata = try container.decodeIfPresent(Metadata.self, forKey: .metadata) ?? [:]
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .identifier)
        try container.encodeIfPresent(predecessors, forKey: .predecessors)
        try container.encode(timestamp, forKey: .timestamp)
        try container.encodeIfPresent(valueDataSize, forKey: .valueDataSize)
        try container.encode(metadata, forKey: .metadata)
    }
}
