import Foundation
import Testing
@testable import LLVS
import LLVSSupport

/// The hash-trie value map against a plain dictionary, with random and long-shared-prefix IDs.
@Suite struct ValueMapTests {
    let directory = TemporaryDirectory()

    enum IDKind: CaseIterable { case random, sharedPrefix }

    func id(_ i: Int, _ kind: IDKind) -> String {
        switch kind {
        case .random: UUID().uuidString
        case .sharedPrefix: "documents/2026/projects/shared-prefix-" + String(repeating: "x", count: 40) + "/\(i)"
        }
    }

    @Test(arguments: IDKind.allCases, StorageKind.allCases)
    func matchesADictionaryThroughManyEdits(kind: IDKind, storage: StorageKind) throws {
        let store = try makeStore(in: directory, storage: storage)
        var expected: [String: String] = [:]
        var ids: [String] = []
        for i in 0..<2000 { ids.append(id(i, kind)) }
        var inserts: [String: String] = [:]
        for id in ids.prefix(1500) { inserts[id] = "v0-\(id)" }
        var head = try store.save(nil, insert: inserts)
        expected = inserts
        var previous = head.id
        // Seeded, and the seed in every failure message, so a failing run can be repeated exactly.
        let seed = UInt64.random(in: 1...UInt64.max)
        var generator = SeededGenerator(seed: seed)
        for round in 1...20 {
            var insert: [String: String] = [:], update: [String: String] = [:], remove: [String] = []
            for _ in 0..<30 {
                let id = ids.randomElement(using: &generator)!
                if insert[id] != nil || update[id] != nil || remove.contains(id) { continue }
                if expected[id] == nil {
                    insert[id] = "v\(round)"
                } else if Bool.random(using: &generator) {
                    update[id] = "v\(round)"
                } else {
                    remove.append(id)
                }
            }
            head = try store.save(previous, insert: insert, update: update, remove: remove)
            let before = expected
            for (k, v) in insert { expected[k] = v }
            for (k, v) in update { expected[k] = v }
            for k in remove { expected[k] = nil }
            #expect(try store.valueCount(at: head.id) == expected.count, "seed \(seed)")
            let changes = try store.valueChanges(madeBetween: previous, and: head.id)
            #expect(changes.count == insert.count + update.count + remove.count, "seed \(seed)")
            #expect(try store.strings(at: previous) == before, "seed \(seed)")
            previous = head.id
        }
        #expect(try store.strings(at: head.id) == expected, "seed \(seed)")
        for id in ids.shuffled(using: &generator).prefix(100) {
            #expect(try store.value(id: Value.ID(id), at: head.id)?.string == expected[id], "seed \(seed)")
        }
    }

    @Test(arguments: StorageKind.allCases) func emptyingAMapAndFillingItAgain(storage: StorageKind) throws {
        let store = try makeStore(in: directory, storage: storage)
        var values: [String: String] = [:]
        for i in 0..<500 { values["k\(i)"] = "\(i)" }
        let full = try store.save(nil, insert: values)
        let empty = try store.save(full.id, remove: Array(values.keys))
        #expect(try store.values(at: empty.id).isEmpty)
        #expect(try store.valueCount(at: empty.id) == 0)
        let again = try store.save(empty.id, insert: ["k1": "back"])
        #expect(try store.strings(at: again.id) == ["k1": "back"])
    }

    @Test func aSaveWritesNodesOnlyAlongTheChangedPath() throws {
        let store = try makeStore(in: directory)
        var values: [String: String] = [:]
        for i in 0..<20_000 { values["same-long-prefix-for-every-id-\(i)"] = "x" }
        let big = try store.save(nil, insert: values)
        let small = try store.save(big.id, update: ["same-long-prefix-for-every-id-7": "y"])
        let file = try ReadableFile(path: (store.storage as! FileStorage).path(for: small.id))
        // One value, a handful of map nodes and the header: a few kilobytes, whatever the store's size.
        #expect(file.size < 8_000)
    }

    /// Leaves are edited in place, not rebuilt: after one save per value, in random order, every leaf is still
    /// sorted by value ID, as one written in a single save.
    @Test func leavesEditedInPlaceStaySorted() throws {
        let store = try makeStore(in: directory)
        var generator = SeededGenerator(seed: 41)
        // 120 values: past one leaf's 32, so the root splits and later saves edit leaves below it. Each save is
        // synced to disk, so the count is kept small.
        let ids = (0..<120).map { "k\($0)" }.shuffled(using: &generator)
        var head = try store.save(nil, insert: [ids[0]: "0"])
        for id in ids.dropFirst() { head = try store.save(head.id, insert: [id: "1"]) }
        // Some updated and removed too, through the same in-place path.
        for id in ids.prefix(15) { head = try store.save(head.id, update: [id: "2"]) }
        for id in ids.suffix(15) { head = try store.save(head.id, remove: [id]) }
        var leaves = 0
        var stack = [try #require(try store.storedVersion(head.id).mapRoot)]
        while let location = stack.popLast() {
            switch try store.map.node(at: location) {
            case .leaf(let entries):
                leaves += 1
                #expect(entries.map(\.valueId) == entries.map(\.valueId).sorted(), "leaf at \(location.offset)")
            case .branch(let children):
                stack.append(contentsOf: children.compactMap { $0 })
            }
        }
        #expect(leaves > 1)
        #expect(try store.valueCount(at: head.id) == 105)
    }
    /// Saves of many values at once (through a dictionary) and of a few (in place) give the same map: every value
    /// where a plain dictionary says it is, leaves sorted, counts right, whichever path each leaf took.
    @Test func bigAndSmallSavesAgree() throws {
        let store = try makeStore(in: directory, name: "big-and-small")
        var generator = SeededGenerator(seed: 43)
        var model: [String: String] = [:]
        var insert: [String: String] = [:]
        for index in 0..<3000 { insert["v\(index)"] = "first \(index)" }
        model.merge(insert) { _, new in new }
        var head = try store.save(nil, insert: insert)
        for round in 0..<6 {
            // Rounds of a few edits and of many, over leaves that hold some of them.
            let count = round.isMultiple(of: 2) ? 5 : 400
            let ids = Array(model.keys).shuffled(using: &generator)
            let updated = Dictionary(uniqueKeysWithValues: ids.prefix(count).map { ($0, "round \(round)") })
            let removed = Array(ids.dropFirst(count).prefix(count))
            let inserted = Dictionary(uniqueKeysWithValues: (0..<count).map { ("r\(round)-\($0)", "new \(round)") })
            head = try store.save(head.id, insert: inserted, update: updated, remove: removed)
            model.merge(updated) { _, new in new }
            for id in removed { model[id] = nil }
            model.merge(inserted) { _, new in new }
            #expect(try store.valueCount(at: head.id) == model.count)
        }
        let references = try store.valueReferences(at: head.id)
        #expect(Set(references.map(\.valueId.rawValue)) == Set(model.keys))
        for id in model.keys.sorted().prefix(300) {
            #expect(try store.value(id: Value.ID(id), at: head.id)?.data == Data(model[id]!.utf8), "\(id)")
        }
        var stack = [try #require(try store.storedVersion(head.id).mapRoot)]
        while let location = stack.popLast() {
            switch try store.map.node(at: location) {
            case .leaf(let entries): #expect(entries.map(\.valueId) == entries.map(\.valueId).sorted())
            case .branch(let children): stack.append(contentsOf: children.compactMap { $0 })
            }
        }
    }
}
