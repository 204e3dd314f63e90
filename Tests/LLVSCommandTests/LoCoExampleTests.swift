import Foundation
import Testing

/// The LoCo example, run as a user runs it: `loco demo --json` in an empty folder.
@Suite struct LoCoExampleTests {
    let tests: CommandLineTests

    init() throws { tests = try CommandLineTests() }

    struct Outcome: Decodable {
        struct Contact: Decodable, Equatable {
            var id: String
            var firstName: String
            var lastName: String
            var city: String
        }
        struct SameField: Decodable {
            var deviceA: Contact
            var deviceB: Contact
        }
        var deviceA: Contact
        var deviceB: Contact
        var query: [[String: String]]
        var sameField: SameField
        var folder: String?
    }

    var loco: URL { CommandLineTests.binary.deletingLastPathComponent().appendingPathComponent("loco") }

    @Test func bothDevicesEndWithBothEditsAndTheProjectionFindsHerInParis() async throws {
        let result = try await tests.run(["demo", "--json"], executable: loco)
        #expect(result.status == 0, "\(result.error)")
        let lines = result.text.split(separator: "\n")
        #expect(lines.count == 1, "one JSON line: \(result.text)")
        let outcome = try JSONDecoder().decode(Outcome.self, from: Data(result.text.utf8))
        #expect(outcome.deviceA == outcome.deviceB)
        #expect(
            outcome.deviceA.firstName == "Ada" && outcome.deviceA.city == "Paris"
                && outcome.deviceA.lastName == "Lovelace")
        #expect(outcome.query == [["first_name": "Ada", "last_name": "Lovelace", "city": "Paris"]])
        // Both changed the city, A first: the later edit (B's) is on both.
        #expect(outcome.sameField.deviceA == outcome.sameField.deviceB)
        #expect(outcome.sameField.deviceA.city == "Berlin" && outcome.sameField.deviceA.firstName == "Ada")
        #expect(outcome.folder == nil)
        // It ran in the test's folder and left nothing there (its stores live in a temporary folder it removes).
        #expect(try FileManager.default.contentsOfDirectory(atPath: tests.directory.path).isEmpty)

        let story = try await tests.run(["demo"], executable: loco)
        #expect(story.status == 0 && story.text.contains("both edits survived the merge"), "\(story.text)")
        #expect(story.text.contains("the edit saved last wins"), "\(story.text)")
        let wrong = try await tests.run(["demo", "--jsn"], executable: loco)
        #expect(wrong.status == 2 && wrong.error.contains("usage: loco demo [--json] [--keep]"))
    }

    @Test func helpDescribesTheExampleAndKeepLeavesTheStoresToLookAt() async throws {
        let overview = try await tests.run(["--help"], executable: loco)
        #expect(overview.status == 0 && overview.text.contains("contact book built on LLVS"), "\(overview.text)")
        let demoHelp = try await tests.run(["demo", "--help"], executable: loco)
        #expect(demoHelp.status == 0, "\(demoHelp.error)")
        #expect(demoHelp.text.contains("--keep") && demoHelp.text.contains("the more recent change wins"))

        let kept = try await tests.run(["demo", "--json", "--keep"], executable: loco)
        #expect(kept.status == 0, "\(kept.error)")
        let outcome = try JSONDecoder().decode(Outcome.self, from: Data(kept.text.utf8))
        let folder = try #require(outcome.folder)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // The kept store opens with llvs, and its current version has the contact as the demo left it.
        let log = try await tests.run(["log", "--store", folder + "/device-a/store"])
        #expect(log.status == 0 && !log.text.isEmpty, "\(log.error)")
        let contact = try await tests.run([
            "get", "\(outcome.deviceA.id)/Contact", "--store", folder + "/device-a/store",
        ])
        #expect(contact.status == 0 && contact.text.contains("Berlin"), "\(contact.text) \(contact.error)")
    }
}
