import Foundation
import LLVS
import LLVSModel
import LLVSProjection
import LLVSSQLite
import Testing

struct Task_: StorableModel, Mergeable, Equatable {
    static let modelTypeIdentifier = "Task"
    var title: String
    var body: String
    var done: Bool
    var priority: Int
    var estimate: Double?
    var when: Date
    var owner: UUID?
    var attachment: Data?
    var labels: [String]
    var place: Address?
}

@Suite struct OwnedTableTests {
    let directory = TemporaryDirectory()

    static func task(_ title: String, body: String = "", when: TimeInterval = 1_000_000) -> Task_ {
        Task_(
            title: title, body: body, done: false, priority: 1, estimate: nil, when: Date(timeIntervalSince1970: when),
            owner: nil, attachment: nil, labels: [], place: nil)
    }

    @Test func theSchemaOfAModelHasAColumnPerProperty() throws {
        let schema = try Task_.sqliteSchema
        let columns = schema.columns.map { "\($0.property)>\($0.name):\($0.kind.rawValue)\($0.isOptional ? "?" : "")" }
        #expect(
            columns == [
                "title>title:text", "body>body:text", "done>done:boolean", "priority>priority:integer",
                "estimate>estimate:real?", "when>when_:date", "owner>owner:uuid?", "attachment>attachment:data?",
                "labels>labels:json", "place>place:json?",
            ])
        #expect(schema.propertiesWithoutColumns.isEmpty)
        #expect(SQLiteSchema.columnName(forProperty: "avatarJPEGData") == "avatar_jpeg_data")
        #expect(SQLiteSchema.columnName(forProperty: "firstName") == "first_name")
        #expect(SQLiteSchema.columnName(forProperty: "order") == "order_")
        #expect(SQLiteSchema.columnName(forProperty: "url2Name") == "url2_name")
    }

    @Test func propertiesDecodedThroughANestedContainerAreListedWithoutColumns() throws {
        struct Custom: StorableModel {
            static let modelTypeIdentifier = "Custom"
            var name: String
            var x: Int
            enum Keys: String, CodingKey { case name, position }
            enum PositionKeys: String, CodingKey { case x }
            init(from decoder: any Decoder) throws {
                let container = try decoder.container(keyedBy: Keys.self)
                name = try container.decode(String.self, forKey: .name)
                x = try container.nestedContainer(keyedBy: PositionKeys.self, forKey: .position).decode(
                    Int.self, forKey: .x)
            }
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: Keys.self)
                try container.encode(name, forKey: .name)
                var position = container.nestedContainer(keyedBy: PositionKeys.self, forKey: .position)
                try position.encode(x, forKey: .x)
            }
        }
        let schema = try Custom.sqliteSchema
        #expect(schema.columns.map(\.name) == ["name"])
        #expect(schema.propertiesWithoutColumns == ["position"])
    }

    @Test func aTypeThatCannotBeMadeFromEmptyValuesSaysWhichProperty() throws {
        enum Kind: String, Codable, Sendable { case a, b }
        struct Tagged: StorableModel {
            static let modelTypeIdentifier = "Tagged"
            var kind: Kind
        }
        #expect { try Tagged.sqliteSchema } throws: { error in
            guard case ProjectionError.unreadableSchema(_, let reason) = error else { return false }
            return reason.contains("kind")
        }
        let declared = SQLiteSchema(columns: [.init(property: "kind", kind: .text, isOptional: false)])
        #expect(
            try OwnedTable(typeIdentifier: "Tagged", tableName: "tagged", schema: declared).createStatements().count
                == 7)
    }

    @Test func sqlWritesDrainIntoOneVersionOfModels() async throws {
        let store = try Store(rootDirectoryURL: directory.child("store"))
        let database = try SQLiteDatabase(fileURL: directory.child("app.sqlite"))
        let table = try OwnedTable(Task_.self, tableName: "tasks")
        try table.create(in: database)
        try table.create(in: database)
        try database.execute("CREATE INDEX IF NOT EXISTS tasks_when ON tasks(when_)")

        try database.run(
            "INSERT INTO tasks(llvs_id, title, body, done, priority, when_, labels, place, owner, attachment) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                .text("t1"), .text("Write"), .text("the note"), .integer(0), .integer(2), .real(1_700_000_000),
                .text(#"["home"]"#), .text(#"{"street":"Ockham","city":"Surrey"}"#),
                .text("E621E1F8-C36C-495A-93FC-0C247A3E6E5F"), .blob(Data([9, 8])),
            ])
        try database.run(
            "INSERT INTO tasks(llvs_id, title, body, done, priority, when_, labels) VALUES ('t2', 'Read', '', 1, 1, 0, '[]')"
        )
        #expect(try table.pendingChangeCount(in: database) == 2)
        let first = try #require(try table.drain(in: database, store: store))
        #expect(try table.currentVersion(in: database) == first.id)
        #expect(try table.pendingChangeCount(in: database) == 0)
        #expect(try table.drain(in: database, store: store) == nil)

        // The values are the models' JSON, as the coordinator's typed API reads them.
        let coordinator = try StoreCoordinator(store: store)
        let t1 = try #require(try await coordinator.fetchModel(Task_.self, instanceIdentifier: "t1"))
        #expect(t1.title == "Write" && t1.priority == 2 && t1.labels == ["home"] && t1.place?.city == "Surrey")
        #expect(t1.when == Date(timeIntervalSince1970: 1_700_000_000))
        #expect(t1.owner == UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F"))
        #expect(t1.attachment == Data([9, 8]))
        #expect(try await coordinator.fetchModel(Task_.self, instanceIdentifier: "t2")?.done == true)

        try database.execute(
            "UPDATE tasks SET title = 'Write well' WHERE llvs_id = 't1'; DELETE FROM tasks WHERE llvs_id = 't2'")
        let second = try #require(try table.drain(in: database, store: store))
        #expect(second.predecessors?.idOfFirst == first.id)
        let changes = try store.valueChanges(madeInVersionIdentifiedBy: second.id).map {
            "\($0.valueId) \($0.isUpdate ? "update" : "other")"
        }
        #expect(changes == ["t1/Task update", "t2/Task other"])
        #expect(try store.value(id: "t2/Task", at: second.id) == nil)

        let fetched = try table.fetch(Task_.self, in: database, where: "when_ > ?", bindings: [.real(1_600_000_000)])
        #expect(fetched.map(\.id) == ["t1"])
        #expect(fetched.first?.model.title == "Write well")
    }

    @Test func applyBringsChangesFromElsewhereWithoutRecordingThem() throws {
        let store = try Store(rootDirectoryURL: directory.child("store"))
        let v1 = try store.makeVersion(
            basedOnPredecessor: nil,
            inserting: [
                Value(id: "a/Task", data: try json(Self.task("A"))),
                Value(id: "b/Task", data: try json(Self.task("B"))),
                Value(id: "n/Note", data: try json(Note(title: "not a task", body: ""))),
                Value(id: "bad/Task", data: Data(#"{"title":1}"#.utf8)),
            ])
        let v2 = try store.makeVersion(
            basedOnPredecessor: v1.id, updating: [Value(id: "a/Task", data: try json(Self.task("A2")))],
            removing: ["b/Task"])
        let database = try SQLiteDatabase(fileURL: directory.child("app.sqlite"))
        let table = try OwnedTable(Task_.self, tableName: "tasks")
        try table.create(in: database)
        let first = try table.apply(changesIn: store, upTo: v1.id, in: database)
        #expect(first.rowsWritten == 2 && first.unreadableIds == ["bad/Task"])
        let second = try table.apply(changesIn: store, upTo: v2.id, in: database)
        #expect(second.rowsWritten == 1 && second.rowsRemoved == 1)
        #expect(try table.fetch(Task_.self, in: database).map(\.model.title) == ["A2"])
        #expect(try table.currentVersion(in: database) == v2.id)
        #expect(try table.pendingChangeCount(in: database) == 0)

        try database.execute("UPDATE tasks SET body = 'local' WHERE llvs_id = 'a'")
        #expect(throws: ProjectionError.undrainedChanges(table: "tasks", count: 1)) {
            try table.apply(changesIn: store, upTo: v1.id, in: database)
        }
        #expect(try table.fetch(Task_.self, in: database).first?.model.body == "local")
    }

    /// Two devices edit one row, each a different column, and sync through a remote: both edits survive on both.
    @Test func ownedTablesRoundTripBetweenTwoStoresThroughARemote() async throws {
        let remote = directory.child("remote")
        let table = try OwnedTable(Task_.self, tableName: "tasks")
        struct Device {
            let coordinator: StoreCoordinator
            let database: SQLiteDatabase
            let exchange: FileSystemExchange
        }
        var devices: [Device] = []
        for name in ["a", "b"] {
            let coordinator = try StoreCoordinator(store: try Store(rootDirectoryURL: directory.child(name)))
            let arbiter = MergeableArbiter()
            arbiter.register(Task_.self)
            await coordinator.setMergeArbiter(arbiter)
            let database = try SQLiteDatabase(fileURL: directory.child("\(name).sqlite"))
            try table.create(in: database)
            devices.append(
                Device(
                    coordinator: coordinator, database: database,
                    exchange: FileSystemExchange(rootDirectoryURL: remote, store: coordinator.store)))
        }
        /// Drains local edits, syncs, and applies what the sync brought.
        func sync(_ device: Device) async throws {
            if let drained = try table.drain(
                in: device.database, store: device.coordinator.store,
                basedOn: await device.coordinator.currentVersionId)
            {
                try await device.coordinator.setCurrentVersion(drained.id)
            }
            _ = try await device.coordinator.exchange(with: device.exchange)
            if let current = await device.coordinator.currentVersionId {
                try table.apply(changesIn: device.coordinator.store, upTo: current, in: device.database)
            }
        }
        let (a, b) = (devices[0], devices[1])
        try a.database.execute(
            "INSERT INTO tasks(llvs_id, title, body, done, priority, when_, labels) VALUES ('t', 'Draft', 'Body', 0, 1, 0, '[]')"
        )
        try await sync(a)
        try await sync(b)
        #expect(try table.fetch(Task_.self, in: b.database).map(\.model.title) == ["Draft"])

        try a.database.execute("UPDATE tasks SET title = 'Final' WHERE llvs_id = 't'")
        try b.database.execute("UPDATE tasks SET body = 'Edited body' WHERE llvs_id = 't'")
        try await sync(a)
        try await sync(b)
        try await sync(a)
        for device in [a, b] {
            let task = try #require(try table.fetch(Task_.self, in: device.database).first?.model)
            #expect(task.title == "Final")
            #expect(task.body == "Edited body")
            #expect(try await device.coordinator.fetchModel(Task_.self, instanceIdentifier: "t") == task)
        }
    }
}
