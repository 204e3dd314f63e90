import Foundation
import LLVS
import LLVSModel
import LLVSSQLite
import LLVSSupport
import Synchronization

/// Brings a database's projection tables to a version of a store: from the version they reflect, by the
/// differences between the two (so a pass costs what changed), or from nothing after a schema change.
///
/// A pass is one transaction holding the rows and the version marker: a crash leaves the tables at the previous
/// version, and the next pass repeats the work.
struct Projector {
    let types: [ProjectedType]
    let schemaVersion: Int

    init(types: [ProjectedType], schemaVersion: Int) throws {
        var identifiers = Set<String>()
        var tables = Set<String>()
        for type in types {
            _ = try SQLName.checked(type.tableName)
            guard tables.insert(type.tableName).inserted else { throw ProjectionError.duplicateName(type.tableName) }
            guard identifiers.insert(type.typeIdentifier).inserted else {
                throw ProjectionError.duplicateName(type.typeIdentifier)
            }
            var columns: Set<String> = ["llvs_id"]
            for column in type.columns {
                guard columns.insert(try SQLName.checked(column.name)).inserted else {
                    throw ProjectionError.duplicateName(column.name)
                }
            }
        }
        self.types = types
        self.schemaVersion = schemaVersion
    }

    func prepare(_ database: SQLiteDatabase) throws {
        try database.execute(ProjectionState.createStatement())
    }

    /// Projects `target` (no version: empty tables) of `store` into `database`.
    func project(_ target: Version.ID?, of store: Store, into database: SQLiteDatabase) throws -> ProjectionResult {
        var result = ProjectionResult(versionId: target)
        try database.transaction {
            let state = try ProjectionState.read(from: database)
            let tableNames = types.map(\.tableName)
            let knownVersion = state.versionId.map { store.version(identifiedBy: $0) != nil } ?? true
            let rebuild = state.schemaVersion != schemaVersion || state.tables != tableNames || !knownVersion
            if !rebuild && state.versionId == target { return }
            if rebuild {
                for table in Set(state.tables).union(tableNames) {
                    try database.execute("DROP TABLE IF EXISTS \(SQLName.quoted(try SQLName.checked(table)))")
                }
                for type in types { try database.execute(createStatement(for: type)) }
                result.rebuilt = true
            }
            let from = rebuild ? nil : state.versionId
            if let target {
                try write(try store.valueChangeList(madeBetween: from, and: target), into: database, result: &result)
            } else {
                for type in types { try database.run("DELETE FROM \(SQLName.quoted(type.tableName))") }
            }
            try ProjectionState(versionId: target, schemaVersion: schemaVersion, tables: tableNames).write(to: database)
        }
        return result
    }

    private func createStatement(for type: ProjectedType) -> String {
        let columns =
            ["llvs_id TEXT PRIMARY KEY NOT NULL"] + type.columns.map { "\(SQLName.quoted($0.name)) \($0.declaration)" }
        return "CREATE TABLE \(SQLName.quoted(type.tableName))(\(columns.joined(separator: ", ")))"
    }

    /// Writes the rows of the changes: worker threads read and extract the values, batch by batch and in order,
    /// while this thread writes the previous batches (extraction is pure; the connection is this thread's).
    private func write(_ changes: ValueChangeList, into database: SQLiteDatabase, result: inout ProjectionResult) throws
    {
        // Which changes concern a projected type: found by each type's suffix, without reading any data.
        let suffixes = types.map { "/" + $0.typeIdentifier }
        let relevant: [Projected] = (0..<changes.count).compactMap { index in
            let raw = changes.valueId(at: index).rawValue
            guard let table = suffixes.firstIndex(where: { raw.hasSuffix($0) && raw.utf8.count > $0.utf8.count }) else {
                return nil
            }
            return Projected(index: index, table: table, rowId: String(raw.dropLast(suffixes[table].count)))
        }
        let handoff = OrderedHandoff<[RowChange]>(budget: Self.workAheadBatches)
        let producerDone = DispatchSemaphore(value: 0)
        let projector = self
        Thread {
            defer {
                handoff.finish()
                producerDone.signal()
            }
            for start in stride(from: 0, to: relevant.count, by: Self.batchSize) {
                let batch = Array(relevant[start..<min(start + Self.batchSize, relevant.count)])
                guard handoff.put(projector.rowChanges(batch, of: changes), weight: 1) else { return }
            }
        }.start()
        defer {
            _ = handoff.cancel()
            producerDone.wait()
        }
        let statements = types.map(Statements.init)
        while let rows = handoff.take() {
            for row in rows {
                switch row {
                case .write(let table, let bindings):
                    try database.run(statements[table].replace, bindings)
                    result.rowsWritten += 1
                case .remove(let table, let id):
                    try database.run(statements[table].delete, [.text(id)])
                    result.rowsRemoved += database.changeCount
                case .unreadable(let table, let id, let valueId):
                    result.recordUnreadable(valueId)
                    try database.run(statements[table].delete, [.text(id)])
                case .failed(let error):
                    throw error
                }
            }
        }
    }

    static let batchSize = 4096
    static let workAheadBatches = 4

    /// A row change worked out from a value change, ready to be written.
    enum RowChange: Sendable {
        /// `table` is the index of the type in `types`; `bindings` the row's ID, then its columns in declaration order.
        case write(table: Int, bindings: [SQLiteValue])
        case remove(table: Int, id: String)
        case unreadable(table: Int, id: String, valueId: Value.ID)
        case failed(any Error)
    }

    /// The SQL of a table's writes, made once per pass.
    struct Statements {
        let replace: String
        let delete: String

        init(for type: ProjectedType) {
            let table = SQLName.quoted(type.tableName)
            let names = (["llvs_id"] + type.columns.map(\.name)).map(SQLName.quoted)
            let placeholders = Array(repeating: "?", count: names.count).joined(separator: ", ")
            replace = "INSERT OR REPLACE INTO \(table)(\(names.joined(separator: ", "))) VALUES (\(placeholders))"
            delete = "DELETE FROM \(table) WHERE llvs_id = ?"
        }
    }

    /// A change of a value of a projected type.
    struct Projected: Sendable {
        var index: Int
        /// The index of its type in `types`.
        var table: Int
        var rowId: String
    }

    /// The row changes of a batch, in the batch's order (a value changed twice in one pass is written in order),
    /// read and extracted on all cores.
    private func rowChanges(_ batch: [Projected], of changes: ValueChangeList) -> [RowChange] {
        let workers = min(ProcessInfo.processInfo.activeProcessorCount, max(1, batch.count / 64))
        let share = (batch.count + workers - 1) / workers
        let results = Mutex([[RowChange]](repeating: [], count: workers))
        // Each worker reads and extracts a contiguous part of the batch (so the parts join back in order).
        DispatchQueue.concurrentPerform(iterations: workers) { worker in
            let part = batch[min(worker * share, batch.count)..<min((worker + 1) * share, batch.count)]
            let rows: [RowChange]
            do {
                let read = try changes.changes(at: part.map(\.index))
                rows = zip(part, read).map { rowChange($0, .success($1)) }
            } catch {
                rows = [.failed(error)]
            }
            results.withLock { $0[worker] = rows }
        }
        return results.withLock { $0.flatMap { $0 } }
    }

    private func rowChange(_ projected: Projected, _ read: Result<Value.Change, any Error>) -> RowChange {
        let type = types[projected.table]
        let change: Value.Change
        do {
            change = try read.get()
        } catch {
            return .failed(error)
        }
        switch change {
        case .insert(let value), .update(let value):
            let extracted: [String: ProjectedValue]
            do {
                extracted = try type.extract(value)
            } catch {
                return .unreadable(table: projected.table, id: projected.rowId, valueId: value.id)
            }
            if let unknown = extracted.keys.first(where: { key in !type.columns.contains { $0.name == key } }) {
                return .failed(ProjectionError.unknownColumn(table: type.tableName, column: unknown))
            }
            var bindings: [SQLiteValue] = [.text(projected.rowId)]
            bindings.reserveCapacity(type.columns.count + 1)
            for column in type.columns { bindings.append(extracted[column.name] ?? .null) }
            return .write(table: projected.table, bindings: bindings)
        case .remove, .preserveRemoval, .preserve:
            // Differences between two versions are only inserts, updates and removals.
            return .remove(table: projected.table, id: projected.rowId)
        }
    }
}
