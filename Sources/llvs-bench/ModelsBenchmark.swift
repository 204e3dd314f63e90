import Foundation
import LLVS
import LLVSModel
import LLVSProjection
import LLVSSQLite

/// `llvs-bench models`: typed models against SQLite itself, side by side in one run.
/// - A first projection pass over `--models` changed contacts (each read from the store and decoded from JSON by
///   its `extract`) against inserting the same rows into the same table with one prepared statement in one
///   transaction: SQLite's own limit here. Then a pass after 1% of them changed.
/// - A drain of `--rows` row changes of an owned table into one version against saving the same values (the same
///   JSON, already encoded) directly as one version.
/// Medians of `--runs`; ratios are over the SQLite-only or store-only figure.
func modelsBenchmark(_ arguments: [String]) async throws {
    let modelCount = Int(option("models", in: arguments) ?? "") ?? 100_000
    let rowCount = Int(option("rows", in: arguments) ?? "") ?? 10_000
    let runs = Int(option("runs", in: arguments) ?? "") ?? 3
    let work = FileManager.default.temporaryDirectory.appendingPathComponent("llvs-bench-models-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: work) }
    print(
        "Models: a projection pass over \(modelCount) contacts and a drain of \(rowCount) row changes; medians of \(runs) runs"
    )

    let store = try Store(rootDirectoryURL: work.appendingPathComponent("store"))
    let coordinator = try StoreCoordinator(store: store)
    let contacts = (0..<modelCount).map { BenchContact(index: $0) }
    let values = try contacts.map {
        Value(id: try BenchContact.valueId(instanceIdentifier: $0.id), data: try JSONEncoder().encode($0))
    }
    try await coordinator.save(inserting: values)

    var projectTimes: [Double] = [], insertTimes: [Double] = [], incrementalTimes: [Double] = []
    for run in 0..<runs {
        let databaseURL = work.appendingPathComponent("projection-\(run).sqlite")
        let follower = try ProjectionFollower(
            databaseURL: databaseURL, coordinator: coordinator, types: [BenchContact.projection])
        // Each figure starts with nothing left to write back, so one run's writes do not slow the next one's.
        settleWriteback()
        projectTimes.append(try await asyncSeconds { _ = try await follower.projectCurrentVersion() })

        let raw = try SQLiteDatabase(fileURL: work.appendingPathComponent("raw-\(run).sqlite"))
        try raw.execute(
            "CREATE TABLE contacts(llvs_id TEXT PRIMARY KEY NOT NULL, first_name TEXT, last_name TEXT, city TEXT, age INTEGER)"
        )
        settleWriteback()
        insertTimes.append(
            try seconds {
                try raw.transaction {
                    for contact in contacts {
                        try raw.run(
                            "INSERT OR REPLACE INTO contacts(llvs_id, first_name, last_name, city, age) VALUES (?, ?, ?, ?, ?)",
                            [
                                .text(contact.id), .text(contact.firstName), .text(contact.lastName),
                                .text(contact.city), .integer(Int64(contact.age)),
                            ])
                    }
                }
            })
        let changed = try stride(from: run, to: modelCount, by: 100).map { index in
            var contact = contacts[index]
            contact.city = "City \(run)"
            return Value(
                id: try BenchContact.valueId(instanceIdentifier: contact.id), data: try JSONEncoder().encode(contact))
        }
        try await coordinator.save(updating: changed)
        settleWriteback()
        incrementalTimes.append(try await asyncSeconds { _ = try await follower.projectCurrentVersion() })
    }
    // Where a pass's time goes: the same work in parts, each alone on one thread.
    guard let head = await coordinator.currentVersionId else { throw BenchmarkError("the store has no version") }
    var listTimes: [Double] = [], readTimes: [Double] = [], decodeTimes: [Double] = []
    settleWriteback()
    for _ in 0..<runs {
        var list: ValueChangeList?
        listTimes.append(try seconds { list = try store.valueChangeList(madeBetween: nil, and: head) })
        guard let list else { continue }
        readTimes.append(
            try seconds {
                for start in stride(from: 0, to: list.count, by: 4096) {
                    _ = try list.changes(at: Array(start..<min(start + 4096, list.count)))
                }
            })
        decodeTimes.append(
            try seconds { for value in values { _ = try JSONDecoder().decode(BenchContact.self, from: value.data) } })
    }
    let project = median(projectTimes), insert = median(insertTimes)
    print(String(format: "projection pass, %d models       %8.3f s", modelCount, project))
    print(
        String(format: "same rows, one prepared INSERT   %8.3f s   ratio %.2f (target ≤ 3)", insert, project / insert))
    print(
        String(
            format: "  parts alone, one thread: list of changes %.3f s, reading the values %.3f s, JSONDecoder %.3f s",
            median(listTimes), median(readTimes), median(decodeTimes)))
    print(String(format: "pass after %d changed (1%%)     %8.3f s", modelCount / 100, median(incrementalTimes)))

    let table = try OwnedTable(BenchContact.self, tableName: "contacts")
    let database = try SQLiteDatabase(fileURL: work.appendingPathComponent("owned.sqlite"))
    try table.create(in: database)
    let ownedStore = try Store(rootDirectoryURL: work.appendingPathComponent("owned-store"))
    try table.apply(
        values.prefix(rowCount).map { Value.Change.insert($0) }, in: database,
        atVersion: try ownedStore.makeVersion(basedOnPredecessor: nil, inserting: Array(values.prefix(rowCount))).id)
    var drainTimes: [Double] = [], saveTimes: [Double] = []
    for run in 0..<runs {
        try database.run("UPDATE contacts SET city = ?", [.text("Drained \(run)")])
        settleWriteback()
        drainTimes.append(try seconds { _ = try table.drain(in: database, store: ownedStore) })
        let same = try contacts.prefix(rowCount).map { contact in
            var edited = contact
            edited.city = "Saved \(run)"
            return Value(
                id: try BenchContact.valueId(instanceIdentifier: contact.id), data: try JSONEncoder().encode(edited))
        }
        let base = try table.currentVersion(in: database)
        settleWriteback()
        saveTimes.append(try seconds { _ = try ownedStore.makeVersion(basedOnPredecessor: base, updating: same) })
    }
    let drain = median(drainTimes), save = median(saveTimes)
    print(String(format: "drain of %d row changes         %8.3f s", rowCount, drain))
    print(String(format: "same values saved directly       %8.3f s   ratio %.2f (target ≤ 3)", save, drain / save))
}

func asyncSeconds(_ body: () async throws -> Void) async rethrows -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    try await body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}

/// A contact of the benchmark: the shape of LoCo's, without its picture.
struct BenchContact: StorableModel {
    static let modelTypeIdentifier = "Contact"
    var id: String
    var firstName: String
    var lastName: String
    var city: String
    var age: Int

    init(index: Int) {
        id = String(format: "contact-%08d", index)
        firstName = "First \(index)"
        lastName = "Last \(index % 977)"
        city = "City \(index % 31)"
        age = 20 + index % 60
    }

    static let projection = ProjectedType.model(
        BenchContact.self, tableName: "contacts",
        columns: [
            ProjectedColumn(name: "first_name", declaration: "TEXT"),
            ProjectedColumn(name: "last_name", declaration: "TEXT"),
            ProjectedColumn(name: "city", declaration: "TEXT"), ProjectedColumn(name: "age", declaration: "INTEGER"),
        ]
    ) { contact in
        [
            "first_name": .text(contact.firstName), "last_name": .text(contact.lastName), "city": .text(contact.city),
            "age": .integer(Int64(contact.age)),
        ]
    }
}
