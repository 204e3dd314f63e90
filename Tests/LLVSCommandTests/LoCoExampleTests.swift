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
        var deviceA: Contact
        var deviceB: Contact
        var query: [[String: String]]
    }

    @Test func bothDevicesEndWithBothEditsAndTheProjectionFindsHerInParis() async throws {
        let loco = CommandLineTests.binary.deletingLastPathComponent().appendingPathComponent("loco")
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
        // It ran in the test's folder and left nothing there (its stores live in a temporary folder it removes).
        #expect(try FileManager.default.contentsOfDirectory(atPath: tests.directory.path).isEmpty)

        let story = try await tests.run(["demo"], executable: loco)
        #expect(story.status == 0 && story.text.contains("both edits survived the merge"), "\(story.text)")
        let wrong = try await tests.run(["demo", "--jsn"], executable: loco)
        #expect(wrong.status == 2 && wrong.error.contains("usage: loco demo [--json]"))
    }
}
