import Foundation
import LLVSSQLite
import LLVSSupport
import Testing
@testable import LLVS

/// The storages the core tests run against, each test once per kind.
enum StorageKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case file, sqlite
    var testDescription: String { rawValue }
}

/// A fresh folder under the system's temporary folder, removed when the value is dropped.
final class TemporaryDirectory: @unchecked Sendable {
    let url: URL

    init(_ label: String = "llvs-test") {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("\(label)-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    func child(_ name: String) -> URL { url.appendingPathComponent(name) }

    deinit { try? FileManager.default.removeItem(at: url) }
}

enum TestPaths {
    /// The package's root folder, found from this file's location.
    static let packageRoot = BuiltProgram.packageRoot()

    static let exampleRemote = packageRoot.appendingPathComponent("Tests/LLVSTests/Fixtures/llvs-remote-example")

    /// A program built beside the test bundle (`swift test` builds the executables tests depend on).
    static func builtProduct(_ name: String) -> URL { BuiltProgram.url(name) }
}

extension Value {
    init(_ id: String, _ string: String) { self.init(id: ID(id), data: Data(string.utf8)) }
    var string: String { String(decoding: data, as: UTF8.self) }
}

func makeStore(in directory: TemporaryDirectory, name: String = "store", storage: StorageKind = .file) throws -> Store {
    try makeStore(at: directory.child(name), storage: storage)
}

func makeStore(at url: URL, storage: StorageKind) throws -> Store {
    try Store(
        creatingAt: url, descriptor: StoreDescriptor(storage: storage.rawValue), makeStorage: SQLiteStorage.storageMaker
    )
}

func openStore(_ url: URL) throws -> Store {
    try Store(openingAt: url, makeStorage: SQLiteStorage.storageMaker)
}

extension Store {
    /// The values of a version as a plain dictionary of strings, for comparing whole states.
    func strings(at version: Version.ID) throws -> [String: String] {
        Dictionary(uniqueKeysWithValues: try values(at: version).map { ($0.id.rawValue, $0.string) })
    }

    @discardableResult
    func save(
        _ predecessor: Version.ID?, insert: [String: String] = [:], update: [String: String] = [:],
        remove: [String] = [],
        timestamp: TimeInterval = Date().timeIntervalSinceReferenceDate, branch: String? = nil
    ) throws -> Version {
        let changes =
            insert.sorted { $0.key < $1.key }.map { Value.Change.insert(Value($0.key, $0.value)) }
            + update.sorted { $0.key < $1.key }.map { Value.Change.update(Value($0.key, $0.value)) }
            + remove.map { Value.Change.remove(Value.ID($0)) }
        var metadata = Version.Metadata()
        if let branch { metadata[.branch] = try Version.MetadataValue(branch) }
        return try makeVersion(
            basedOn: predecessor.map { Version.Predecessors(idOfFirst: $0) }, storing: changes,
            metadata: metadata, timestamp: timestamp)
    }
}

/// Parses JSON for comparisons that must ignore key order and `\/` escaping.
func parsedJSON(_ data: Data) throws -> NSObject {
    try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed]) as! NSObject
}
