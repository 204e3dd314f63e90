import Foundation
import LLVS
import LLVSModel
import Testing

@Suite struct ModelStorageTests {
    let directory = TemporaryDirectory()

    /// A contact as an LLVS app stores it, written by hand from the rules upstream follows: the value ID is
    /// "<instance>/<type>", the JSON is JSONEncoder's default (dates as seconds since 2001-01-01, data as base64).
    static let upstreamContactID = "7B4F0C1E-2D9A-4C55-9E0B-3A1C7D2E8F60/Contact"
    static let upstreamContactJSON =
        #"{"firstName":"Ada","lastName":"Lovelace","city":"London","tags":["math"],"born":-5838000000,"avatar":"AQID"}"#

    @Test func aModelWrittenByAnAppReadsHereAndOneWrittenHereHasItsShape() async throws {
        let store = try Store(rootDirectoryURL: directory.child("store"))
        try store.makeVersion(
            basedOnPredecessor: nil,
            inserting: [Value(id: Value.ID(Self.upstreamContactID), data: Data(Self.upstreamContactJSON.utf8))])
        let coordinator = try StoreCoordinator(store: store)
        let read = try #require(
            try await coordinator.fetchModel(Contact.self, instanceIdentifier: "7B4F0C1E-2D9A-4C55-9E0B-3A1C7D2E8F60"))
        #expect(read.firstName == "Ada")
        #expect(read.born == Date(timeIntervalSince1970: -5838000000 + 978_307_200))
        #expect(read.avatar == Data([1, 2, 3]))

        try await coordinator.save(read, instanceIdentifier: "copy")
        let written = try #require(try await coordinator.value(id: "copy/Contact"))
        let tree = try #require(try JSONSerialization.jsonObject(with: written.data) as? [String: Any])
        #expect(tree["born"] as? Double == -5838000000)
        #expect(tree["avatar"] as? String == "AQID")
        #expect(tree["firstName"] as? String == "Ada")
    }

    @Test func saveFetchAllAndRemoveAtTheCurrentVersion() async throws {
        let coordinator = try StoreCoordinator(store: try Store(rootDirectoryURL: directory.child("store")))
        let first = try await coordinator.save(Contact(firstName: "Ada", city: "London"), instanceIdentifier: "b")
        try await coordinator.save(
            Contact(firstName: "Charles", lastName: "Babbage", city: "London"), instanceIdentifier: "a")
        try await coordinator.save(Note(title: "not a contact", body: ""), instanceIdentifier: "a")
        var edited = Contact(firstName: "Ada", city: "Paris")
        edited.nickname = "Countess"
        let update = try await coordinator.save(edited, instanceIdentifier: "b")

        #expect(try await coordinator.fetchAllModels(Contact.self).map(\.firstName) == ["Charles", "Ada"])
        #expect(try await coordinator.fetchModel(Contact.self, instanceIdentifier: "b") == edited)
        #expect(try coordinator.store.valueChanges(madeInVersionIdentifiedBy: update.id).map(\.isUpdate) == [true])
        #expect(try coordinator.store.value(id: "b/Contact", at: first.id) != nil)

        #expect(try await coordinator.removeModel(Contact.self, instanceIdentifier: "b") != nil)
        #expect(try await coordinator.removeModel(Contact.self, instanceIdentifier: "b") == nil)
        #expect(try await coordinator.fetchModel(Contact.self, instanceIdentifier: "b") == nil)
        #expect(try await coordinator.fetchAllModels(Note.self).count == 1)
    }

    @Test func badIdentifiersAndUndecodableValuesAreClearErrors() async throws {
        struct Slashed: StorableModel { static let modelTypeIdentifier = "a/b" }
        let coordinator = try StoreCoordinator(store: try Store(rootDirectoryURL: directory.child("store")))
        await #expect(throws: ModelError.invalidTypeIdentifier("a/b")) {
            try await coordinator.save(Slashed(), instanceIdentifier: "x")
        }
        await #expect(throws: ModelError.emptyInstanceIdentifier(type: "Contact")) {
            try await coordinator.save(Contact(firstName: "A", city: "B"), instanceIdentifier: "")
        }
        try await coordinator.save([.insert(Value(id: "x/Contact", data: Data("[]".utf8)))])
        await #expect { try await coordinator.fetchModel(Contact.self, instanceIdentifier: "x") } throws: { error in
            guard case ModelError.undecodable(let id, let type, _) = error else { return false }
            return id == "x/Contact" && type == "Contact"
        }
    }

    @Test func theCoordinatorsArbiterMergesModelsOnSync() async throws {
        let remote = directory.child("remote")
        let a = try StoreCoordinator(store: try Store(rootDirectoryURL: directory.child("a")))
        let b = try StoreCoordinator(store: try Store(rootDirectoryURL: directory.child("b")))
        for coordinator in [a, b] {
            let arbiter = MergeableArbiter()
            arbiter.register(Contact.self)
            await coordinator.setMergeArbiter(arbiter)
        }
        let exchangeA = FileSystemExchange(rootDirectoryURL: remote, store: a.store)
        let exchangeB = FileSystemExchange(rootDirectoryURL: remote, store: b.store)
        try await a.save(Contact(firstName: "A.", city: "London"), instanceIdentifier: "ada")
        _ = try await a.exchange(with: exchangeA)
        _ = try await b.exchange(with: exchangeB)
        var onA = try #require(try await a.fetchModel(Contact.self, instanceIdentifier: "ada"))
        var onB = try #require(try await b.fetchModel(Contact.self, instanceIdentifier: "ada"))
        onA.firstName = "Ada"
        onB.city = "Paris"
        try await a.save(onA, instanceIdentifier: "ada")
        try await b.save(onB, instanceIdentifier: "ada")
        _ = try await a.exchange(with: exchangeA)
        _ = try await b.exchange(with: exchangeB)
        _ = try await a.exchange(with: exchangeA)
        for coordinator in [a, b] {
            let contact = try await coordinator.fetchModel(Contact.self, instanceIdentifier: "ada")
            #expect(contact?.firstName == "Ada")
            #expect(contact?.city == "Paris")
        }
    }
}

extension Value.Change {
    var isUpdate: Bool { if case .update = self { true } else { false } }
}
