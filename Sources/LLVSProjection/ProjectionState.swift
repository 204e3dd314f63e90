import LLVS
import LLVSSQLite

/// What a projection database records about itself, in the same transaction as its rows: the version the tables
/// reflect, the schema version they were made for and the tables made.
struct ProjectionState: Equatable {
    static let tableName = "llvs_projection_state"

    var versionId: Version.ID?
    var schemaVersion: Int?
    var tables: [String] = []

    static func createStatement() -> String {
        "CREATE TABLE IF NOT EXISTS \(tableName)(key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL)"
    }

    static func read(from database: SQLiteDatabase) throws -> ProjectionState {
        var state = ProjectionState()
        try database.run("SELECT key, value FROM \(tableName)") { row in
            guard case .text(let key) = row.value(inColumnAtIndex: 0),
                case .text(let value) = row.value(inColumnAtIndex: 1)
            else {
                throw ProjectionError.damagedState(path: database.path, reason: "a row of \(tableName) is not text")
            }
            switch key {
            case "version": state.versionId = Version.ID(value)
            case "schemaVersion":
                guard let number = Int(value) else {
                    throw ProjectionError.damagedState(
                        path: database.path, reason: "the schema version \"\(value)\" is not a number")
                }
                state.schemaVersion = number
            case "tables": state.tables = value.split(separator: ",").map(String.init)
            default: break
            }
        }
        return state
    }

    func write(to database: SQLiteDatabase) throws {
        try database.run("DELETE FROM \(Self.tableName)")
        let rows: [(String, String?)] = [
            ("version", versionId?.rawValue), ("schemaVersion", schemaVersion.map(String.init)),
            ("tables", tables.joined(separator: ",")),
        ]
        for case let (key, value?) in rows {
            try database.run("INSERT INTO \(Self.tableName)(key, value) VALUES (?, ?)", [.text(key), .text(value)])
        }
    }
}
