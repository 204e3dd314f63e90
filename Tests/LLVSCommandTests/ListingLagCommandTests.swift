import Foundation
import Testing

/// Two stores syncing through a remote whose listings lag behind its uploads (`listing-lag` on every upload: a new
/// file is left out of its folder's next two listings, as services with a search index do): a version the listing
/// does not show yet arrives with a later sync, nothing fails, and what each store sent is there whole.
@Suite final class ListingLagCommandTests {
    let tests: CommandLineTests

    init() throws { tests = try CommandLineTests() }

    func path(_ name: String) -> String { tests.directory.appendingPathComponent(name).path }

    @Test(arguments: ["webdav", "gdrive", "onedrive", "box", "pcloud", "dropbox"])
    func storesConvergeThoughListingsLag(kind: String) async throws {
        for store in ["a", "b"] { #expect(try await tests.run(["init", "--store", path(store)]).status == 0) }
        #expect(try await tests.run(["put", "from-a", "-", "--store", path("a")], input: Data("A".utf8)).status == 0)
        #expect(try await tests.run(["put", "from-b", "-", "--store", path("b")], input: Data("B".utf8)).status == 0)
        let mock = try await tests.addRemote(kind, folder: "Stores/lagging", faults: "listing-lag:1")
        // Each store syncs in turn until both hold both values; every sync must succeed, lag or not.
        var rounds = 0
        func holdsBoth(_ store: String) async throws -> Bool {
            let a = try await tests.run(["get", "from-a", "--store", path(store)])
            let b = try await tests.run(["get", "from-b", "--store", path(store)])
            return a.status == 0 && a.text == "A" && b.status == 0 && b.text == "B"
        }
        while rounds < 6 {
            rounds += 1
            for store in ["a", "b"] {
                let synced = try await tests.run(["sync", "home", "--store", path(store)])
                #expect(synced.status == 0, "\(kind) sync \(rounds) of \(store): \(synced.error)")
            }
            let aHolds = try await holdsBoth("a"), bHolds = try await holdsBoth("b")
            if aHolds && bHolds { break }
        }
        let aHolds = try await holdsBoth("a"), bHolds = try await holdsBoth("b")
        let converged = aHolds && bHolds
        #expect(converged, "\(kind): the stores did not converge in \(rounds) rounds")
        #expect(rounds > 1, "\(kind): the listings never lagged (the fault did not bite)")
        withExtendedLifetime(mock) {}
    }
}
