import Foundation
import Testing

/// `llvs sync` against each mock with one of its final named faults on every request it can meet: the sync ends
/// with the service's reason (what a user must do), and the store is as it was, still whole.
@Suite final class FinalFaultCommandTests {
    let tests: CommandLineTests

    init() throws { tests = try CommandLineTests() }

    func path(_ name: String) -> String { tests.directory.appendingPathComponent(name).path }

    static let cases: [(kind: String, fault: String, says: String)] = [
        ("webdav", "insufficient-storage", "no room"), ("webdav", "too-large", "body limit"),
        ("gdrive", "daily-limit", "dailyLimitExceeded"), ("gdrive", "storage-quota", "no room"),
        ("gdrive", "invalid-grant", "llvs auth"),
        ("onedrive", "quota-full", "no room"), ("onedrive", "invalid-grant", "llvs auth"),
        ("box", "storage-full", "storage"), ("box", "invalid-grant", "llvs auth"),
        ("pcloud", "over-quota", "no room"), ("pcloud", "token-revoked", "llvs auth"),
        ("dropbox", "insufficient-space", "no room"), ("dropbox", "invalid-grant", "llvs auth"),
    ]

    @Test(arguments: cases.map { "\($0.kind) \($0.fault)" })
    func aSyncMeetingAFinalFaultSaysWhyAndKeepsTheStore(name: String) async throws {
        let entry = try #require(Self.cases.first { "\($0.kind) \($0.fault)" == name })
        #expect(try await tests.run(["init", "--store", path("a")]).status == 0)
        #expect(
            try await tests.run(["put", "greeting", "-", "--store", path("a")], input: Data("hello".utf8)).status == 0)
        let before = try await tests.run(["log", "--store", path("a")]).text
        let mock = try await tests.addRemote(
            entry.kind, folder: "Stores/final", faults: "\(entry.fault):1",
            expiredToken: entry.fault == "invalid-grant")
        let synced = try await tests.run(["sync", "home", "--store", path("a")])
        #expect(synced.status != 0, "the sync went on through \(entry.fault)")
        #expect(
            synced.error.localizedCaseInsensitiveContains(entry.says),
            "the error for \(entry.fault) should say \"\(entry.says)\": \(synced.error)")
        #expect(!synced.error.contains("Fatal error"), "\(synced.error)")
        let after = try await tests.run(["log", "--store", path("a")])
        #expect(after.status == 0 && after.text == before, "the store changed or no longer opens: \(after.error)")
        #expect(try await tests.run(["get", "greeting", "--store", path("a")]).text == "hello")
        withExtendedLifetime(mock) {}
    }
}
