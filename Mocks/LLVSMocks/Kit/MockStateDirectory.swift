import Foundation
import LLVSSupport

/// Where a mock keeps what it holds between runs (`llvs-mock SERVICE --state DIR`): `state.json` describing the
/// items and one file per stored content under `files/`. The state is written after every change (atomically:
/// a temporary file renamed over the old one) and read once at start, so a mock can be stopped and started again
/// in the middle of a manual test. Meant for manual tests, not for thousands of items.
public struct MockStateDirectory: Sendable {
    public let url: URL

    public init(_ url: URL) throws {
        self.url = url
        try FileManager.default.createDirectory(
            at: url.appendingPathComponent("files"), withIntermediateDirectories: true)
    }

    var stateFile: URL { url.appendingPathComponent("state.json") }
    func file(_ name: String) -> URL { url.appendingPathComponent("files").appendingPathComponent(name) }

    /// The saved state, or nil when there is none yet.
    func load<T: Decodable>(_ type: T.Type) throws -> T? {
        guard FileManager.default.fileExists(atPath: stateFile.path) else { return nil }
        do {
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .secondsSince1970
            return try decoder.decode(type, from: Data(contentsOf: stateFile))
        } catch {
            throw MockStateError("the mock state \(stateFile.path) cannot be read: \(error)")
        }
    }

    func save<T: Encodable>(_ value: T) throws {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        encoder.outputFormatting = [.sortedKeys]
        let temporary = url.appendingPathComponent(".state-\(UUID().uuidString).json")
        try encoder.encode(value).write(to: temporary)
        guard rename(temporary.path, stateFile.path) == 0 else {
            try? FileManager.default.removeItem(at: temporary)
            throw MockStateError("cannot replace \(stateFile.path)")
        }
    }

    /// Makes sure a content is in `files/` under `name` (data written, a file linked or copied); returns its URL.
    @discardableResult
    func keep(_ data: Data?, orFileAt source: URL?, as name: String) throws -> URL {
        let target = file(name)
        if FileManager.default.fileExists(atPath: target.path) { return target }
        if let data {
            try data.write(to: target)
        } else if let source {
            if link(source.path, target.path) != 0 { try FileManager.default.copyItem(at: source, to: target) }
        }
        return target
    }

    /// Removes content files no item names any more.
    func prune(keeping names: Set<String>) {
        let folder = url.appendingPathComponent("files")
        for name in (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        where !names.contains(name) {
            try? FileManager.default.removeItem(at: folder.appendingPathComponent(name))
        }
    }
}

struct MockStateError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

extension MockStateDirectory {
    /// Keeps the contents of `items` under `files/` (each named by `fileName`, so an unchanged content is not
    /// written again), removes files no item names any more, and returns each item's file name by ID.
    func keepContents<Item: MockTreeItem>(of items: some Sequence<Item>, fileName: (Item) -> String) -> [String: String]
    {
        var files: [String: String] = [:]
        for item in items {
            guard let content = item.content else { continue }
            let name = fileName(item)
            switch content {
            case .data(let data): _ = try? keep(data, orFileAt: nil, as: name)
            case .spooled(let url, _): _ = try? keep(nil, orFileAt: url, as: name)
            }
            files[item.id] = name
        }
        prune(keeping: Set(files.values))
        return files
    }
}

/// What `--state` keeps for a mock built on `MockItemTree` (Box, OneDrive, pCloud): the items, each content's file
/// name under `files/`, the mock's ID counter and the tokens it issued.
struct MockSavedTree<Item: MockTreeItem & Codable, Counter: Codable>: Codable {
    var items: [Item]
    var files: [String: String]
    var counter: Counter
    var tokens: MockOAuthServer.Tokens
}

extension MockStateDirectory {
    /// Writes every item but the root, in `order` (parents before children, so a load can restore them in turn), with
    /// the contents kept under the names `fileName` gives.
    func saveTree<Item: MockTreeItem & Codable, Counter: Codable>(
        _ tree: MockItemTree<Item>, counter: Counter, tokens: MockOAuthServer.Tokens,
        order: (Item, Item) -> Bool, fileName: (Item) -> String
    ) {
        let items = tree.items.values.filter { $0.id != tree.rootID }
        let files = keepContents(of: items, fileName: fileName)
        try? save(MockSavedTree(items: items.sorted(by: order), files: files, counter: counter, tokens: tokens))
    }

    /// Puts a saved tree back into `tree`, each content read from its file (`attach` gives it to the item); nil when
    /// nothing was saved.
    func loadTree<Item: MockTreeItem & Codable, Counter: Codable>(
        into tree: inout MockItemTree<Item>, counter: Counter.Type,
        attach: (inout Item, URL) -> Void
    ) throws -> (counter: Counter, tokens: MockOAuthServer.Tokens)? {
        guard let loaded = try load(MockSavedTree<Item, Counter>.self) else { return nil }
        for var item in loaded.items {
            if let name = loaded.files[item.id] { attach(&item, file(name)) }
            tree.restore(item)
        }
        return (loaded.counter, loaded.tokens)
    }
}
