import Foundation
import LLVS
import LLVSCloudService
import Synchronization
import Testing

struct MemoryItem: IdentifiedItem {
    var id: String
    var name: String
    var isFolder: Bool
    var parent: String
}

/// A directory in memory that counts lookups and creations.
final class MemoryDirectory: IDDirectory, Sendable {
    struct State {
        var items: [MemoryItem] = []
        var lookups = 0
        var creations: [String] = []
        var next = 1
    }
    let state = Mutex(State())
    let caseInsensitive: Bool
    /// Lookups wait here until the test opens it (when every concurrent caller has come), so they overlap for sure.
    let gate: Gate?
    init(caseInsensitive: Bool = false, gate: Gate? = nil) {
        self.caseInsensitive = caseInsensitive
        self.gate = gate
    }

    var rootID: String { "root" }

    func items(named name: String, in folderID: String, path: String) async throws -> [MemoryItem] {
        await gate?.wait()
        return state.withLock { state in
            state.lookups += 1
            return state.items.filter {
                $0.parent == folderID && (caseInsensitive ? $0.name.lowercased() == name.lowercased() : $0.name == name)
            }
        }
    }

    func createFolder(named name: String, in folderID: String, path: String) async throws -> MemoryItem? {
        state.withLock { state in
            let item = MemoryItem(id: "id\(state.next)", name: name, isFolder: true, parent: folderID)
            state.next += 1
            state.items.append(item)
            state.creations.append(path)
            return item
        }
    }

    func add(_ item: MemoryItem) { state.withLock { $0.items.append(item) } }
}

@Suite struct IDPathCacheTests {
    @Test func concurrentCallersCreateEachFolderOnceAndLaterOnesAskNothing() async throws {
        let gate = Gate()
        let directory = MemoryDirectory(gate: gate)
        let cache = IDPathCache(directory)
        let ids = try await withThrowingTaskGroup(of: String?.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    // The first lookup waits until all eight callers have come, so they meet it in flight.
                    await gate.arrive(openingAt: 8)
                    return try await cache.folderID(["new", "nested", "folder"], creating: true)
                }
            }
            return try await group.reduce(into: Set<String?>()) { $0.insert($1) }
        }
        #expect(ids.count == 1)
        #expect(directory.state.withLock { $0.creations } == ["new", "new/nested", "new/nested/folder"])
        let lookups = directory.state.withLock { $0.lookups }
        #expect(try await cache.folderID(["new", "nested", "folder"], creating: false) == ids.first!)
        #expect(directory.state.withLock { $0.lookups } == lookups, "a cached path costs no request")
    }

    @Test func aForgottenPathIsResolvedAgainAndAFileIsNotAFolder() async throws {
        let directory = MemoryDirectory()
        directory.add(MemoryItem(id: "f1", name: "a", isFolder: true, parent: "root"))
        directory.add(MemoryItem(id: "x1", name: "file", isFolder: false, parent: "f1"))
        let cache = IDPathCache(directory)
        #expect(try await cache.folderID(["a"], creating: false) == "f1")
        await #expect(throws: CloudFileSystemError.wrongKind(path: "a/file", expectedFolder: true)) {
            _ = try await cache.folderID(["a", "file"], creating: false)
        }
        #expect(try await cache.folderID(["a", "missing"], creating: false) == nil)
        let seen = Mutex<[String]>([])
        let result = try await cache.withFileID(["a", "file"]) { id in
            seen.withLock { $0.append(id) }
            if seen.withLock({ $0.count }) == 1 {
                directory.add(MemoryItem(id: "x2", name: "file", isFolder: false, parent: "f1"))
            }
            return id
        }
        #expect(result == "x1")
        cache.forget(["a"])
        #expect(cache.cached(["a", "file"]) == nil)
    }

    /// A composed and a decomposed `é` are two keys unless the service takes them for one name; Swift's `==` takes
    /// them for one, so keys are spelled in ASCII, and a name that spells an escape literally is not mistaken for one.
    @Test func pathKeysTellSpellingsApartByTheirBytes() {
        let exact = PathKeys(caseInsensitive: false)
        #expect(exact.key(["caf\u{E9}"]) != exact.key(["cafe\u{301}"]))
        #expect(!exact.sameName("caf\u{E9}", "cafe\u{301}"))
        #expect(exact.key(["caf\\u{e9}"]) != exact.key(["caf\u{E9}"]))
        #expect(exact.key(["plain/ascii"]) == "plain/ascii")
        let oneDrive = PathKeys(caseInsensitive: true, canonicallyEquivalentNamesCollide: true)
        #expect(oneDrive.sameName("CAF\u{C9}", "cafe\u{301}"))
        let box = PathKeys(caseInsensitive: true)
        #expect(box.sameName("Case", "case") && !box.sameName("caf\u{E9}", "cafe\u{301}"))
    }

    @Test func casesMeetInOneEntryWhereTheServiceIgnoresCase() async throws {
        let directory = MemoryDirectory(caseInsensitive: true)
        let cache = IDPathCache(directory, caseInsensitive: true)
        let first = try await cache.folderID(["Docs"], creating: true)
        let second = try await cache.folderID(["docs"], creating: true)
        #expect(first == second)
        #expect(directory.state.withLock { $0.creations } == ["Docs"])
    }
}

/// Holds whoever waits until it is opened; open for good after that.
actor Gate {
    private var isOpen = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    func wait() async {
        if !isOpen { await withCheckedContinuation { waiting.append($0) } }
    }

    private var arrivals = 0

    /// Counts one arrival, and opens once `count` have come.
    func arrive(openingAt count: Int) {
        arrivals += 1
        if arrivals >= count { open() }
    }

    func open() {
        isOpen = true
        for continuation in waiting { continuation.resume() }
        waiting = []
    }
}
