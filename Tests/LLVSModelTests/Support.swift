import Foundation
import LLVS
import LLVSModel

/// A fresh folder under the system's temporary folder, removed when the value is dropped.
final class TemporaryDirectory: Sendable {
    let url: URL

    init() {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("llvs-model-test-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    func child(_ name: String) -> URL { url.appendingPathComponent(name) }

    deinit { try? FileManager.default.removeItem(at: url) }
}

struct Address: Codable, Equatable, Sendable, Mergeable {
    var street: String
    var city: String
}

/// Compared whole: not Mergeable.
struct Phone: Codable, Equatable, Sendable {
    var country: String
    var number: String
}

struct Contact: StorableModel, Mergeable, Equatable {
    static let modelTypeIdentifier = "Contact"
    var firstName: String
    var lastName: String
    var city: String
    var nickname: String?
    var tags: [String] = []
    var address: Address?
    var phone: Phone?
    var born: Date?
    var avatar: Data?

    init(firstName: String, lastName: String = "Lovelace", city: String) {
        self.firstName = firstName
        self.lastName = lastName
        self.city = city
    }
}

/// A model whose values are merged whole by the fallback (not registered with the arbiter in the tests that use it).
struct Note: StorableModel, Mergeable, Equatable {
    static let modelTypeIdentifier = "Note"
    var title: String
    var body: String
}

/// Two stores' worth of history in one: an ancestor and a version on each side of it, with chosen timestamps.
struct ForkedStore {
    let store: Store
    let ancestor: Version
    let first: Version
    let second: Version

    init(
        at url: URL, ancestor values: [String: Data], first: [String: Data?], second: [String: Data?],
        firstTime: TimeInterval = 200, secondTime: TimeInterval = 100
    ) throws {
        store = try Store(rootDirectoryURL: url)
        ancestor = try Self.save(values.mapValues { Optional($0) }, on: nil, at: 10, in: store)
        self.first = try Self.save(first, on: ancestor.id, at: firstTime, in: store)
        self.second = try Self.save(second, on: ancestor.id, at: secondTime, in: store)
    }

    private static func save(
        _ values: [String: Data?], on base: Version.ID?, at time: TimeInterval, in store: Store
    ) throws -> Version {
        let changes: [Value.Change] = try values.sorted { $0.key < $1.key }.map { key, data in
            let id = Value.ID(key)
            guard let data else { return .remove(id) }
            let exists = try base.flatMap { try store.value(id: id, at: $0) } != nil
            return exists ? .update(Value(id: id, data: data)) : .insert(Value(id: id, data: data))
        }
        return try store.makeVersion(
            basedOn: base.map { Version.Predecessors(idOfFirst: $0) }, storing: changes, timestamp: time)
    }

    func merged(with arbiter: any MergeArbiter) throws -> Version {
        try store.merge(version: first.id, with: second.id, resolvingWith: arbiter)
    }
}

func json<M: Encodable>(_ model: M) throws -> Data { try JSONEncoder().encode(model) }

func model<M: Decodable>(_ type: M.Type, _ id: String, at version: Version, in store: Store) throws -> M? {
    try store.value(id: Value.ID(id), at: version.id).map { try JSONDecoder().decode(M.self, from: $0.data) }
}
