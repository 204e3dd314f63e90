import Foundation
import Testing
@testable import LLVS

@Suite struct MergeTests {
    let directory = TemporaryDirectory()

    /// A store with a common ancestor holding a=1, b=2, c=3, d=4 and two branches off it.
    func fork(
        first: (inout Edits) -> Void, second: (inout Edits) -> Void,
        firstTime: TimeInterval = 200, secondTime: TimeInterval = 100, name: String = "store", storage: StorageKind
    ) throws -> (Store, Version, Version, Version) {
        let store = try makeStore(in: directory, name: name, storage: storage)
        let base = try store.save(nil, insert: ["a": "1", "b": "2", "c": "3", "d": "4"], timestamp: 10)
        var e1 = Edits(), e2 = Edits()
        first(&e1)
        second(&e2)
        let v1 = try store.save(base.id, insert: e1.insert, update: e1.update, remove: e1.remove, timestamp: firstTime)
        let v2 = try store.save(base.id, insert: e2.insert, update: e2.update, remove: e2.remove, timestamp: secondTime)
        return (store, base, v1, v2)
    }

    struct Edits {
        var insert: [String: String] = [:], update: [String: String] = [:], remove: [String] = []
    }

    @Test(arguments: StorageKind.allCases) func forkKinds(storage: StorageKind) throws {
        let (store, base, v1, v2) = try fork(
            first: {
                $0.insert["new1"] = "x"; $0.update["a"] = "a1"; $0.remove = ["b", "d"]; $0.insert["both"] = "f";
                $0.update["c"] = "c1"
            },
            second: {
                $0.insert["new2"] = "y"; $0.remove = ["d", "c"]; $0.insert["both"] = "s"; $0.update["b"] = "b2"
            }, storage: storage)
        let forks = try store.forks(between: v1.id, and: v2.id, commonAncestor: base.id)
        #expect(
            forks == [
                "new1": .inserted(.first), "new2": .inserted(.second), "a": .updated(.first),
                "d": .twiceRemoved, "both": .twiceInserted,
                "b": .removedAndUpdated(removedOn: .first), "c": .removedAndUpdated(removedOn: .second),
            ])
        let (store2, base2, w1, w2) = try fork(
            first: {
                $0.update["a"] = "x"; $0.remove = ["b"]
            },
            second: {
                $0.update["a"] = "y"; $0.update["c"] = "z"
            }, name: "other", storage: storage)
        #expect(
            try store2.forks(between: w1.id, and: w2.id, commonAncestor: base2.id) == [
                "a": .twiceUpdated, "b": .removed(.first), "c": .updated(.second),
            ])
    }

    @Test(arguments: StorageKind.allCases) func mostRecentChangeWinsAndAnUpdateBeatsARemoval(
        storage: StorageKind
    ) throws {
        let (store, _, v1, v2) = try fork(
            first: {
                $0.update["a"] = "first"; $0.remove = ["b"]; $0.insert["n"] = "first"
            },
            second: {
                $0.update["a"] = "second"; $0.update["b"] = "kept"; $0.insert["n"] = "second"; $0.update["c"] = "c2"
            },
            firstTime: 100, secondTime: 200, storage: storage)
        let merged = try store.merge(version: v1.id, with: v2.id)
        #expect(merged.predecessors == .init(idOfFirst: v1.id, idOfSecond: v2.id))
        #expect(try store.strings(at: merged.id) == ["a": "second", "b": "kept", "c": "c2", "d": "4", "n": "second"])
    }

    @Test(arguments: StorageKind.allCases) func changeArbiterTieGoesToTheFirst(storage: StorageKind) throws {
        let (store, _, v1, v2) = try fork(
            first: { $0.update["a"] = "first" }, second: { $0.update["a"] = "second" },
            firstTime: 100, secondTime: 100, storage: storage)
        #expect(try store.value(id: "a", at: store.merge(version: v1.id, with: v2.id).id)?.string == "first")
    }

    @Test(arguments: StorageKind.allCases) func mostRecentBranchWinsEvenWithARemoval(storage: StorageKind) throws {
        let (store, _, v1, v2) = try fork(
            first: {
                $0.update["a"] = "first"; $0.remove = ["b"]
            },
            second: {
                $0.update["a"] = "second"; $0.update["b"] = "updated"
            },
            firstTime: 300, secondTime: 200, storage: storage)
        let merged = try store.merge(version: v1.id, with: v2.id, resolvingWith: MostRecentBranchFavoringArbiter())
        #expect(try store.strings(at: merged.id) == ["a": "first", "c": "3", "d": "4"])
        let other = try store.merge(version: v2.id, with: v1.id, resolvingWith: MostRecentBranchFavoringArbiter())
        #expect(try store.strings(at: other.id) == ["a": "first", "c": "3", "d": "4"])
    }

    @Test(arguments: StorageKind.allCases) func fastForwardMakesNoVersion(storage: StorageKind) throws {
        let store = try makeStore(in: directory, storage: storage)
        let v1 = try store.save(nil, insert: ["a": "1"])
        let v2 = try store.save(v1.id, insert: ["b": "2"])
        #expect(try store.merge(version: v1.id, with: v2.id).id == v2.id)
        #expect(try store.merge(version: v2.id, with: v1.id).id == v2.id)
        #expect(store.history.count == 2)
    }

    @Test(arguments: StorageKind.allCases) func twoWayMergeOfUnrelatedHistories(storage: StorageKind) throws {
        let store = try makeStore(in: directory, storage: storage)
        let a = try store.save(nil, insert: ["shared": "A", "onlyA": "1"], timestamp: 10)
        let b = try store.save(nil, insert: ["shared": "B", "onlyB": "2"], timestamp: 20)
        #expect(try store.greatestCommonAncestor(a.id, b.id) == nil)
        #expect(
            try store.forks(between: a.id, and: b.id, commonAncestor: nil) == [
                "shared": .twiceInserted, "onlyA": .inserted(.first), "onlyB": .inserted(.second),
            ])
        let merged = try store.merge(version: a.id, with: b.id)
        #expect(try store.strings(at: merged.id) == ["shared": "B", "onlyA": "1", "onlyB": "2"])
    }

    struct LazyArbiter: MergeArbiter {
        func changes(toResolve merge: Merge, in store: Store) throws -> [Value.Change] { [] }
    }

    struct SecondWinsArbiter: MergeArbiter {
        func changes(toResolve merge: Merge, in store: Store) throws -> [Value.Change] {
            try merge.conflictingValueIds.map { id in
                if let value = try store.value(id: id, at: merge.secondVersion.id) {
                    .preserve(value.reference!)
                } else {
                    .remove(id)
                }
            } + [.insert(Value("arbiter-note", "merged"))]
        }
    }

    @Test(arguments: StorageKind.allCases) func anUnresolvedConflictIsAnErrorAndSavesNothing(
        storage: StorageKind
    ) throws {
        let (store, _, v1, v2) = try fork(
            first: { $0.update["a"] = "x" }, second: { $0.update["a"] = "y" }, storage: storage)
        let count = store.history.count
        #expect(throws: StoreError.unresolvedConflicts(valueIds: ["a"])) {
            try store.merge(version: v1.id, with: v2.id, resolvingWith: LazyArbiter())
        }
        #expect(store.history.count == count)
    }

    @Test(arguments: StorageKind.allCases) func aCustomArbiterCanWriteNewValues(storage: StorageKind) throws {
        let (store, _, v1, v2) = try fork(
            first: { $0.update["a"] = "x" }, second: { $0.update["a"] = "y" }, firstTime: 500, storage: storage)
        let merged = try store.merge(version: v1.id, with: v2.id, resolvingWith: SecondWinsArbiter())
        #expect(try store.strings(at: merged.id) == ["a": "y", "b": "2", "c": "3", "d": "4", "arbiter-note": "merged"])
        #expect(
            try store.valueChanges(madeInVersionIdentifiedBy: merged.id).contains(
                .insert(
                    Value(id: "arbiter-note", data: Data("merged".utf8), storedVersionId: merged.id))))
    }

    @Test(arguments: StorageKind.allCases) func crissCrossMergeGivesTheSameValuesOnBothSides(
        storage: StorageKind
    ) throws {
        let store = try makeStore(in: directory, storage: storage)
        let root = try store.save(nil, insert: ["x": "0", "y": "0"], timestamp: 1)
        let a = try store.save(root.id, update: ["x": "a"], timestamp: 2)
        let b = try store.save(root.id, update: ["y": "b"], timestamp: 3)
        let ab = try store.merge(version: a.id, with: b.id)
        let ba = try store.merge(version: b.id, with: a.id)
        let a2 = try store.save(ab.id, update: ["x": "a2"], timestamp: 10)
        let b2 = try store.save(ba.id, insert: ["z": "b2"], timestamp: 11)
        let final1 = try store.merge(version: a2.id, with: b2.id)
        let final2 = try store.merge(version: b2.id, with: a2.id)
        #expect(try store.strings(at: final1.id) == ["x": "a2", "y": "b", "z": "b2"])
        #expect(try store.strings(at: final2.id) == store.strings(at: final1.id))
    }

    @Test(arguments: StorageKind.allCases) func mergingHeadsGivesTheSameResultWhateverOrderTheyWereMade(
        storage: StorageKind
    ) throws {
        var results: [[String: String]] = []
        for order in [[0, 1, 2], [2, 0, 1], [1, 2, 0]] {
            let dir = TemporaryDirectory()
            let store = try makeStore(in: dir, storage: storage)
            let root = try store.makeVersion(basedOn: nil, storing: [.insert(Value("k", "root"))], timestamp: 1)
            var made: [Int: Version] = [:]
            for i in order {
                made[i] = try store.save(
                    root.id, insert: ["only\(i)": "\(i)"], update: ["k": "head\(i)"],
                    timestamp: 10 + TimeInterval(i % 2))
            }
            // Merge into the same version each time: the first head.
            let merged = try store.mergeHeads(into: made[0]!.id)
            #expect(store.heads == [merged.id])
            results.append(try store.strings(at: merged.id))
        }
        #expect(results.allSatisfy { $0 == results[0] })
        #expect(results[0]["only0"] == "0" && results[0]["only1"] == "1" && results[0]["only2"] == "2")
    }

    @Test(arguments: StorageKind.allCases) func headSelectionByBranch(storage: StorageKind) throws {
        let store = try makeStore(in: directory, storage: storage)
        let root = try store.save(nil, insert: ["a": "0"], timestamp: 1)
        let main = try store.save(root.id, insert: ["main": "1"], timestamp: 2)
        let imported = try store.save(root.id, insert: ["import": "1"], timestamp: 3, branch: "import")
        let draft = try store.save(root.id, insert: ["draft": "1"], timestamp: 4, branch: "draft")
        #expect(imported.branch == "import")

        let withoutDrafts = try store.mergeHeads(into: main.id, selection: .allExcept(branches: ["draft"]))
        #expect(Set(try store.strings(at: withoutDrafts.id).keys) == ["a", "main", "import"])
        #expect(store.heads.contains(draft.id))

        let onlyDraft = try store.mergeHeads(into: main.id, selection: .branches(["draft"]))
        #expect(Set(try store.strings(at: onlyDraft.id).keys) == ["a", "main", "draft"])

        let all = try store.mergeHeads(into: withoutDrafts.id, selection: .all)
        #expect(Set(try store.strings(at: all.id).keys) == ["a", "main", "import", "draft"])
    }

    @Test(arguments: StorageKind.allCases) func mergeChangesFollowTheFormat(storage: StorageKind) throws {
        let (store, _, v1, v2) = try fork(
            first: {
                $0.update["a"] = "first"; $0.remove = ["b"]
            },
            second: {
                $0.update["a"] = "second"; $0.insert["g"] = "new"
            }, firstTime: 100, secondTime: 200, storage: storage)
        let merged = try store.merge(version: v1.id, with: v2.id)
        #expect(
            try store.valueChanges(madeInVersionIdentifiedBy: merged.id) == [
                .preserve(.init(valueId: "a", storedVersionId: v2.id)),
                .preserveRemoval("b"),
                .preserve(.init(valueId: "g", storedVersionId: v2.id)),
            ])
    }
}

@Suite struct CrissCrossMergeTests {
    let directory = TemporaryDirectory()

    /// Two stores merged the same two heads (A1, B1) into M1 and M2; x was updated in B1 and then removed after M1.
    /// Merging the removal into M2 has two best common ancestors; whichever is newer, the removal must hold, as it
    /// does from the virtual base (A1 and B1 merged), and the result must not depend on which ancestor is newer.
    @Test(arguments: [(100.0, 200.0), (200.0, 100.0)], StorageKind.allCases)
    func aRemovalAfterACrissCrossStaysRemoved(times: (Double, Double), storage: StorageKind) throws {
        let store = try makeStore(in: directory, name: "store-\(times.0)", storage: storage)
        let base = try store.save(nil, insert: ["x": "1", "y": "1"], timestamp: 10)
        let a1 = try store.save(base.id, update: ["y": "2"], timestamp: times.0)
        let b1 = try store.save(base.id, update: ["x": "2"], timestamp: times.1)
        let m1 = try store.merge(version: a1.id, with: b1.id)
        let m2 = try store.merge(version: b1.id, with: a1.id)
        #expect(try store.strings(at: m1.id) == ["x": "2", "y": "2"])
        let a2 = try store.save(m1.id, remove: ["x"], timestamp: 300)
        let merged = try store.merge(version: m2.id, with: a2.id)
        #expect(try store.strings(at: merged.id) == ["y": "2"], "x came back")
        #expect(
            merged.predecessors == Version.Predecessors(idOfFirst: m2.id, idOfSecond: a2.id),
            "an ordinary LLVS merge version")
        let other = try store.merge(version: a2.id, with: m2.id)
        #expect(try store.strings(at: other.id) == ["y": "2"], "the result depends on the order of the sides")
    }
}
