import Foundation
import LLVSSupport
import LLVS
import LLVSModel
import LLVSProjection
import LLVSSQLite
import Testing

@Suite struct ProjectionTests {
    let directory = TemporaryDirectory()

    static let contactColumns = [
        ProjectedColumn(name: "first_name", declaration: "TEXT"),
        ProjectedColumn(name: "city", declaration: "TEXT"),
    ]

    static func contacts(table: String = "contacts") -> ProjectedType {
        .model(Contact.self, tableName: table, columns: contactColumns) { contact in
            ["first_name": .text(contact.firstName), "city": .text(contact.city)]
        }
    }

    func rows(_ follower: ProjectionFollower, table: String = "contacts") async throws -> [String] {
        try await follower.query { database in
            var rows: [String] = []
            try database.forEach(matchingQuery: "SELECT llvs_id, first_name, city FROM \(table) ORDER BY llvs_id") {
                row in
                let values = (0..<3).map { row.value(inColumnAtIndex: $0) }
                rows.append(values.map { if case .text(let text) = $0 { text } else { "NULL" } }.joined(separator: " "))
            }
            return rows
        }
    }

    /// `SELECT count(*) FROM <from>` on the follower's database.
    func count(_ follower: ProjectionFollower, _ from: String) async throws -> Int {
        try await follower.query { database in
            var count = -1
            try database.forEach(matchingQuery: "SELECT count(*) FROM \(from)") { row in
                if case .integer(let n) = row.value(inColumnAtIndex: 0) { count = Int(n) }
            }
            return count
        }
    }

    @Test func passesFollowTheDifferencesBetweenVersions() async throws {
        let coordinator = try StoreCoordinator(store: try Store(rootDirectoryURL: directory.child("store")))
        try await coordinator.save(Contact(firstName: "Ada", city: "London"), instanceIdentifier: "ada")
        try await coordinator.save(Contact(firstName: "Charles", city: "London"), instanceIdentifier: "charles")
        try await coordinator.save(Note(title: "n", body: ""), instanceIdentifier: "note")
        let follower = try ProjectionFollower(
            databaseURL: directory.child("projection.sqlite"), coordinator: coordinator,
            types: [Self.contacts()])
        let first = try await follower.projectCurrentVersion()
        #expect(first.rebuilt)
        #expect(first.rowsWritten == 2)
        #expect(try await rows(follower) == ["ada Ada London", "charles Charles London"])

        try await coordinator.save(Contact(firstName: "Ada", city: "Paris"), instanceIdentifier: "ada")
        try await coordinator.removeModel(Contact.self, instanceIdentifier: "charles")
        let second = try await follower.projectCurrentVersion()
        #expect(!second.rebuilt)
        #expect(second.rowsWritten == 1 && second.rowsRemoved == 1)
        #expect(second.versionId == (await coordinator.currentVersionId))
        #expect(try await rows(follower) == ["ada Ada Paris"])

        let again = try await follower.projectCurrentVersion()
        #expect(again.rowsWritten == 0 && again.rowsRemoved == 0 && !again.rebuilt)
    }

    @Test func aNewSchemaVersionOrALostDatabaseRebuildsFromTheStore() async throws {
        let coordinator = try StoreCoordinator(store: try Store(rootDirectoryURL: directory.child("store")))
        try await coordinator.save(Contact(firstName: "Ada", city: "London"), instanceIdentifier: "ada")
        let url = directory.child("projection.sqlite")
        do {
            let follower = try ProjectionFollower(databaseURL: url, coordinator: coordinator, types: [Self.contacts()])
            try await follower.projectCurrentVersion()
            // A row written by hand is gone after a rebuild: the tables hold only what the store says.
            try await follower.query {
                try $0.execute("INSERT INTO contacts(llvs_id, first_name) VALUES ('stray', 'x')")
            }
        }
        let withCountry = ProjectedType.model(
            Contact.self, tableName: "people",
            columns: Self.contactColumns + [ProjectedColumn(name: "last_name", declaration: "TEXT")]
        ) {
            ["first_name": .text($0.firstName), "city": .text($0.city), "last_name": .text($0.lastName)]
        }
        let follower = try ProjectionFollower(
            databaseURL: url, coordinator: coordinator, types: [withCountry], schemaVersion: 2)
        let result = try await follower.projectCurrentVersion()
        #expect(result.rebuilt)
        #expect(try await rows(follower, table: "people") == ["ada Ada London"])
        let tables = try await follower.query { database in
            var names: [String] = []
            try database.forEach(matchingQuery: "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name") {
                row in
                if case .text(let name) = row.value(inColumnAtIndex: 0) { names.append(name) }
            }
            return names
        }
        #expect(tables == ["llvs_projection_state", "people"])

        try FileManager.default.removeItem(at: url)
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: url.path + suffix) }
        let fresh = try ProjectionFollower(
            databaseURL: url, coordinator: coordinator, types: [withCountry], schemaVersion: 2)
        #expect(try await fresh.projectCurrentVersion().rebuilt)
        #expect(try await rows(fresh, table: "people") == ["ada Ada London"])
    }

    @Test func unreadableValuesAreLeftOutAndCountedExactly() async throws {
        let coordinator = try StoreCoordinator(store: try Store(rootDirectoryURL: directory.child("store")))
        let unreadable = (0..<(ProjectionResult.unreadableIdLimit + 5)).map {
            Value(id: Value.ID("bad\($0)/Contact"), data: Data("{}".utf8))
        }
        try await coordinator.save(
            inserting: unreadable + [
                Value(id: "ada/Contact", data: try json(Contact(firstName: "Ada", city: "London")))
            ])
        let follower = try ProjectionFollower(
            databaseURL: directory.child("p.sqlite"), coordinator: coordinator, types: [Self.contacts()])
        let result = try await follower.projectCurrentVersion()
        #expect(result.unreadableCount == ProjectionResult.unreadableIdLimit + 5)
        #expect(result.unreadableIds.count == ProjectionResult.unreadableIdLimit)
        #expect(Set(result.unreadableIds).isSubset(of: Set(unreadable.map(\.id))))
        #expect(try await rows(follower) == ["ada Ada London"])

        // A readable value that becomes unreadable takes its row with it, rather than leaving a stale one.
        try await coordinator.save(updating: [Value(id: "ada/Contact", data: Data("[]".utf8))])
        let second = try await follower.projectCurrentVersion()
        #expect(second.unreadableIds == ["ada/Contact"])
        #expect(try await rows(follower).isEmpty)
    }

    /// More changes than one batch of the pass's workers: every row arrives, in place, whatever thread read it.
    @Test func aPassOverManyBatchesWritesEveryRow() async throws {
        let coordinator = try StoreCoordinator(store: try Store(rootDirectoryURL: directory.child("store")))
        let total = 9_000
        let values = try (0..<total).map { index in
            index % 1_000 == 7
                ? Value(id: Value.ID("c\(index)/Contact"), data: Data("{}".utf8))
                : Value(
                    id: Value.ID("c\(index)/Contact"),
                    data: try json(Contact(firstName: "N\(index)", city: "C\(index % 3)")))
        }
        try await coordinator.save(inserting: values)
        let follower = try ProjectionFollower(
            databaseURL: directory.child("p.sqlite"), coordinator: coordinator, types: [Self.contacts()])
        let result = try await follower.projectCurrentVersion()
        #expect(result.rowsWritten == total - 9 && result.unreadableCount == 9)
        #expect(try await count(follower, "contacts WHERE first_name != 'N' || substr(llvs_id, 2)") == 0)
    }

    @Test func badDeclarationsAreClearErrors() async throws {
        let coordinator = try StoreCoordinator(store: try Store(rootDirectoryURL: directory.child("store")))
        #expect(throws: ProjectionError.invalidName("contacts; DROP")) {
            try ProjectionFollower(
                databaseURL: directory.child("a.sqlite"), coordinator: coordinator,
                types: [Self.contacts(table: "contacts; DROP")])
        }
        #expect(throws: ProjectionError.duplicateName("contacts")) {
            try ProjectionFollower(
                databaseURL: directory.child("b.sqlite"), coordinator: coordinator,
                types: [
                    Self.contacts(),
                    ProjectedType(typeIdentifier: "Other", tableName: "contacts", columns: []) { _ in [:] },
                ])
        }
        try await coordinator.save(Contact(firstName: "Ada", city: "London"), instanceIdentifier: "ada")
        let extra = ProjectedType(typeIdentifier: "Contact", tableName: "contacts", columns: Self.contactColumns) { _ in
            ["zip": .integer(1)]
        }
        let follower = try ProjectionFollower(
            databaseURL: directory.child("c.sqlite"), coordinator: coordinator, types: [extra])
        await #expect(throws: ProjectionError.unknownColumn(table: "contacts", column: "zip")) {
            try await follower.projectCurrentVersion()
        }
        // The failed pass left nothing: the next sees no projected version and still rebuilds.
        #expect(try await count(follower, "llvs_projection_state") == 0)
    }

    @Test func followingRunsAPassForEachNewCurrentVersion() async throws {
        let coordinator = try StoreCoordinator(store: try Store(rootDirectoryURL: directory.child("store")))
        let follower = try ProjectionFollower(
            databaseURL: directory.child("p.sqlite"), coordinator: coordinator, types: [Self.contacts()])
        let (results, continuation) = AsyncStream<Result<ProjectionResult, any Error>>.makeStream()
        let task = follower.followUpdates { continuation.yield($0) }
        defer { task.cancel() }
        var iterator = results.makeAsyncIterator()
        let start = try #require(await iterator.next()).get()
        #expect(start.versionId == nil)
        let saved = try await coordinator.save(Contact(firstName: "Ada", city: "London"), instanceIdentifier: "ada")
        var seen: ProjectionResult?
        while let next = await iterator.next() {
            let result = try next.get()
            if result.versionId == saved.id { seen = result; break }
        }
        #expect(seen?.rowsWritten == 1)
        #expect(try await rows(follower) == ["ada Ada London"])
    }

    /// A pass is one transaction with its version marker: a process killed inside one leaves the tables at the
    /// previous version, and the next pass completes the work.
    @Test func aPassKilledHalfwayLeavesThePreviousVersion() async throws {
        let storeURL = directory.child("store")
        let databaseURL = directory.child("p.sqlite")
        let coordinator = try StoreCoordinator(store: try Store(rootDirectoryURL: storeURL))
        try await coordinator.save(Contact(firstName: "Ada", city: "London"), instanceIdentifier: "ada")
        do {
            let follower = try ProjectionFollower(
                databaseURL: databaseURL, coordinator: coordinator, types: [Self.contacts()])
            try await follower.projectCurrentVersion()
        }
        let before = await coordinator.currentVersionId
        let many = try (0..<200).map {
            Value(id: Value.ID("c\($0)/Contact"), data: try json(Contact(firstName: "N\($0)", city: "Paris")))
        }
        try await coordinator.save(
            inserting: many,
            updating: [Value(id: "ada/Contact", data: try json(Contact(firstName: "Ada", city: "Paris")))])

        // The helper projects with an extract that stops after 100 values, inside the pass's transaction, and says so.
        let helper = ChildProcess()
        helper.standardError = FileHandle.nullDevice  // a child left running must not hold ours
        helper.executableURL = builtProduct("llvs-test-helper")
        helper.arguments = ["project", storeURL.path, databaseURL.path, "100"]
        let output = Pipe()
        helper.standardOutput = output
        helper.standardInput = Pipe()
        try helper.run()
        let line = try #require(try readLine(from: output.fileHandleForReading))
        #expect(line == "paused after 100")
        kill(helper.processIdentifier, SIGKILL)
        helper.waitUntilExit()

        let follower = try ProjectionFollower(
            databaseURL: databaseURL, coordinator: coordinator, types: [Self.contacts()])
        let marker = try await follower.query { database in
            var version: String?
            try database.forEach(matchingQuery: "SELECT value FROM llvs_projection_state WHERE key = 'version'") {
                row in
                if case .text(let id) = row.value(inColumnAtIndex: 0) { version = id }
            }
            return version
        }
        #expect(marker == before?.rawValue)
        #expect(try await rows(follower) == ["ada Ada London"])
        let result = try await follower.projectCurrentVersion()
        #expect(result.rowsWritten == 201)
        #expect(try await rows(follower).count == 201)
    }
}

func builtProduct(_ name: String) -> URL { BuiltProgram.url(name) }

/// One line from a pipe, read byte by byte so nothing after it is consumed; nil at the end of the stream.
func readLine(from handle: FileHandle) throws -> String? {
    var bytes: [UInt8] = []
    while true {
        guard let byte = try handle.read(upToCount: 1), let first = byte.first else {
            return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self)
        }
        if first == UInt8(ascii: "\n") { return String(decoding: bytes, as: UTF8.self) }
        bytes.append(first)
    }
}
