import Foundation
import LLVS
import LLVSModel
import Testing

@Suite struct PropertyMergeTests {
    let directory = TemporaryDirectory()
    let ada = Contact(firstName: "A.", city: "London")

    func arbiter() -> MergeableArbiter {
        let arbiter = MergeableArbiter()
        arbiter.register(Contact.self)
        return arbiter
    }

    /// Merges a contact edited on both sides of a fork (first side stored more recently unless told otherwise).
    func merge(
        _ edit1: (inout Contact) -> Void, _ edit2: (inout Contact) -> Void, from base: Contact? = nil,
        firstTime: TimeInterval = 200, secondTime: TimeInterval = 100
    ) throws -> Contact? {
        let base = base ?? ada
        var one = base, two = base
        edit1(&one)
        edit2(&two)
        let fork = try ForkedStore(
            at: directory.child(UUID().uuidString), ancestor: ["c1/Contact": try json(base)],
            first: ["c1/Contact": try json(one)], second: ["c1/Contact": try json(two)],
            firstTime: firstTime, secondTime: secondTime)
        return try model(Contact.self, "c1/Contact", at: try fork.merged(with: arbiter()), in: fork.store)
    }

    @Test func editsOfDifferentPropertiesBothSurvive() throws {
        let merged = try merge({ $0.firstName = "Ada" }, { $0.city = "Paris" })
        #expect(merged?.firstName == "Ada")
        #expect(merged?.city == "Paris")
        #expect(merged?.lastName == "Lovelace")
    }

    @Test func aPropertyBothSidesChangedGoesToTheMoreRecentlyStoredSide() throws {
        let firstNewer = try merge(
            {
                $0.city = "Rome"; $0.firstName = "Ada"
            }, { $0.city = "Paris" }, firstTime: 200, secondTime: 100)
        #expect(firstNewer?.city == "Rome")
        #expect(firstNewer?.firstName == "Ada")
        let secondNewer = try merge(
            {
                $0.city = "Rome"; $0.firstName = "Ada"
            }, { $0.city = "Paris" }, firstTime: 100, secondTime: 200)
        #expect(secondNewer?.city == "Paris")
        #expect(secondNewer?.firstName == "Ada")
        let tie = try merge({ $0.city = "Rome" }, { $0.city = "Paris" }, firstTime: 150, secondTime: 150)
        #expect(tie?.city == "Rome")
    }

    @Test func nestedMergeableValuesMergeProperty_byProperty() throws {
        var base = ada
        base.address = Address(street: "St James's Square", city: "London")
        let merged = try merge({ $0.address?.street = "Marylebone" }, { $0.address?.city = "Londinium" }, from: base)
        #expect(merged?.address == Address(street: "Marylebone", city: "Londinium"))
    }

    @Test func nestedValuesThatAreNotMergeableAreComparedWhole() throws {
        var base = ada
        base.phone = Phone(country: "44", number: "1")
        // Both sides changed the phone: the more recent side's phone wins whole, not a mix of the two.
        let merged = try merge(
            { $0.phone?.country = "33" }, { $0.phone?.number = "2" }, from: base, firstTime: 100, secondTime: 200)
        #expect(merged?.phone == Phone(country: "44", number: "2"))
    }

    @Test func optionalsSetOnOneSideSurviveAnEditOnTheOther() throws {
        let merged = try merge({ $0.nickname = "Countess" }, { $0.address = Address(street: "Ockham", city: "Surrey") })
        #expect(merged?.nickname == "Countess")
        #expect(merged?.address == Address(street: "Ockham", city: "Surrey"))
        var withNickname = ada
        withNickname.nickname = "Countess"
        let cleared = try merge({ $0.nickname = nil }, { $0.city = "Paris" }, from: withNickname)
        #expect(cleared?.nickname == nil)
        #expect(cleared?.city == "Paris")
    }

    @Test func arraysAreComparedWhole() throws {
        var base = ada
        base.tags = ["math"]
        let oneSide = try merge({ $0.tags.append("poetry") }, { $0.city = "Paris" }, from: base)
        #expect(oneSide?.tags == ["math", "poetry"])
        let bothSides = try merge(
            { $0.tags.append("poetry") }, { $0.tags = ["engines"] }, from: base, firstTime: 100, secondTime: 200)
        #expect(bothSides?.tags == ["engines"])
    }

    @Test func datesAndDataMergeAsTheirEncodings() throws {
        let merged = try merge(
            { $0.born = Date(timeIntervalSinceReferenceDate: -5_838_000_000) }, { $0.avatar = Data([1, 2, 3]) })
        #expect(merged?.born == Date(timeIntervalSinceReferenceDate: -5_838_000_000))
        #expect(merged?.avatar == Data([1, 2, 3]))
    }

    @Test func twoInsertionsWithoutAncestorMergeTwoWay() throws {
        var one = ada, two = ada
        one.firstName = "Ada"
        two.nickname = "Countess"
        let fork = try ForkedStore(
            at: directory.child("two-way"), ancestor: [:], first: ["c1/Contact": try json(one)],
            second: ["c1/Contact": try json(two)], firstTime: 200, secondTime: 100)
        let merged = try model(Contact.self, "c1/Contact", at: try fork.merged(with: arbiter()), in: fork.store)
        // No ancestor: every differing property is a conflict, and the first (more recent) side wins each.
        #expect(merged?.firstName == "Ada")
        #expect(merged?.nickname == nil)
    }

    @Test func anUpdateBeatsARemovalAndUnregisteredValuesGoToTheFallback() throws {
        let note = Note(title: "t", body: "b")
        var edited = ada
        edited.city = "Paris"
        let fork = try ForkedStore(
            at: directory.child("fallback"),
            ancestor: ["c1/Contact": try json(ada), "n1/Note": try json(note), "raw": Data("0".utf8)],
            first: ["c1/Contact": nil, "n1/Note": try json(Note(title: "first", body: "b")), "raw": Data("1".utf8)],
            second: [
                "c1/Contact": try json(edited), "n1/Note": try json(Note(title: "t", body: "second")),
                "raw": Data("2".utf8),
            ],
            firstTime: 100, secondTime: 200)
        let merged = try fork.merged(with: arbiter())
        #expect(try model(Contact.self, "c1/Contact", at: merged, in: fork.store)?.city == "Paris")
        // Note is not registered: the fallback (most recent change) keeps the second side's note whole.
        #expect(try model(Note.self, "n1/Note", at: merged, in: fork.store) == Note(title: "t", body: "second"))
        #expect(try fork.store.value(id: "raw", at: merged.id)?.data == Data("2".utf8))
    }

    @Test func aValueThatIsNotItsRegisteredTypeGoesToTheFallback() throws {
        var edited = ada
        edited.city = "Paris"
        let fork = try ForkedStore(
            at: directory.child("unreadable"), ancestor: ["c1/Contact": try json(ada)],
            first: ["c1/Contact": Data(#"{"written":"by a newer app"}"#.utf8)],
            second: ["c1/Contact": try json(edited)], firstTime: 200, secondTime: 100)
        let merged = try fork.merged(with: arbiter())
        #expect(
            try fork.store.value(id: "c1/Contact", at: merged.id)?.data == Data(#"{"written":"by a newer app"}"#.utf8))
    }

    @Test func aMergeThatEqualsOneSideKeepsThatSidesStoredValue() throws {
        // Both sides made the same edit, so the merge equals the first side: no new data. The sides are written
        // pretty-printed with sorted keys, bytes the model encoder never writes, so only a comparison of what
        // the JSON says (not of its bytes, whose key order varies) finds them equal.
        var edited = ada
        edited.city = "Paris"
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let written = try encoder.encode(edited)
        let fork = try ForkedStore(
            at: directory.child("preserve"), ancestor: ["c1/Contact": try json(ada)],
            first: ["c1/Contact": written], second: ["c1/Contact": written])
        let merged = try fork.merged(with: arbiter())
        let changes = try fork.store.valueChanges(madeInVersionIdentifiedBy: merged.id)
        guard case .preserve(let reference)? = changes.first else {
            Issue.record("expected a preserve, got \(changes)"); return
        }
        #expect(reference.storedVersionId == fork.first.id)
    }

    @Test func aHandWrittenMergeOfANestedTypeIsUsed() throws {
        struct Counter: Codable, Equatable, Mergeable {
            var count: Int
            /// Counts from both sides add up instead of one side winning.
            static func merged(
                _ first: Counter, _ second: Counter, ancestor: Counter?, conflictsFavor favored: Value.Fork.Side
            ) throws -> Counter {
                let base = ancestor?.count ?? 0
                return Counter(count: first.count + second.count - base)
            }
        }
        struct Tally: StorableModel, Mergeable {
            static let modelTypeIdentifier = "Tally"
            var name: String
            var votes: Counter
        }
        let base = Tally(name: "t", votes: Counter(count: 10))
        let fork = try ForkedStore(
            at: directory.child("tally"), ancestor: ["t/Tally": try json(base)],
            first: ["t/Tally": try json(Tally(name: "t", votes: Counter(count: 12)))],
            second: ["t/Tally": try json(Tally(name: "renamed", votes: Counter(count: 15)))])
        let arbiter = MergeableArbiter()
        arbiter.register(Tally.self)
        let merged = try model(Tally.self, "t/Tally", at: try fork.merged(with: arbiter), in: fork.store)
        #expect(merged?.votes == Counter(count: 17))
        #expect(merged?.name == "renamed")
    }
}
