import Foundation
import LLVS
import LLVSSQLite

extension OwnedTable {
    /// Turns the rows changed since the last drain into one version of `store`, on top of `basedOn` (by default the
    /// version the table is a working copy of), and makes that the table's version. Nil when nothing changed.
    ///
    /// Each changed row becomes its model's JSON (a removed row a removal), so a `MergeableArbiter` later merges an
    /// edit of one column here with an edit of another elsewhere. The version is saved before the database commits:
    /// a crash between the two leaves the changes recorded, and the next drain saves them again in a sibling version
    /// with the same values, which merges without conflict.
    @discardableResult
    public func drain(in database: SQLiteDatabase, store: Store, basedOn: Version.ID? = nil) throws -> Version? {
        try database.transaction {
            var changed: [String] = []
            try database.run(
                "SELECT llvs_id FROM \(Self.changesTable) WHERE table_name = ? ORDER BY llvs_id", [.text(tableName)]
            ) { row in
                if case .text(let id) = row.value(inColumnAtIndex: 0) { changed.append(id) }
            }
            guard !changed.isEmpty else { return nil }
            let builder = try store.makeVersionBuilder(basedOn: try basedOn ?? currentVersion(in: database))
            let coding = RowCoding(schema: schema, table: tableName)
            let select = "SELECT \(selectedColumns) FROM \(SQLName.quoted(tableName)) WHERE llvs_id = ?"
            for id in changed {
                var json: Data?
                try database.run(select, [.text(id)]) { row in
                    json = try coding.json(
                        of: (0..<schema.columns.count).map { row.value(inColumnAtIndex: $0 + 1) }, id: id)
                }
                if let json { try builder.put(try valueId(id), json) } else { try builder.remove(try valueId(id)) }
            }
            guard let version = try builder.commit() else { return nil }
            try database.run("DELETE FROM \(Self.changesTable) WHERE table_name = ?", [.text(tableName)])
            try database.run(
                "UPDATE \(Self.stateTable) SET version = ? WHERE table_name = ?",
                [.text(version.id.rawValue), .text(tableName)])
            return version
        }
    }
}
