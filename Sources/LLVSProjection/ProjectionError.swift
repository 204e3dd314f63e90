import LLVS

/// Why a projection or an owned table could not do its work. SQLite's own failures are `StoreError.database`.
public enum ProjectionError: Error, Equatable, CustomStringConvertible {
    /// A table or column name that is not a plain SQL identifier (letters, digits, `_`, not starting with a digit).
    case invalidName(String)
    /// Two projected types or columns with one name.
    case duplicateName(String)
    /// `extract` returned a column its type does not declare.
    case unknownColumn(table: String, column: String)
    /// The database's bookkeeping is not what this library writes.
    case damagedState(path: String, reason: String)
    /// An owned table has row changes not yet drained; applying changes from elsewhere would overwrite them.
    case undrainedChanges(table: String, count: Int)
    /// A model type whose schema cannot be read from its `Decodable` conformance.
    case unreadableSchema(type: String, reason: String)
    /// A change that names a value stored elsewhere (`preserve`, from a merge's own changes) rather than carrying
    /// it: apply differences between two versions (`valueChanges(madeBetween:and:)`) instead.
    case unappliableChange(valueId: Value.ID)
    /// A row that does not decode as its model (a column changed by hand to something the type cannot hold).
    case unreadableRow(table: String, id: String, reason: String)

    public var description: String {
        switch self {
        case .invalidName(let name):
            "\"\(name)\" is not usable as a table or column name: use letters, digits and _, not starting with a digit"
        case .duplicateName(let name): "The name \"\(name)\" is given twice"
        case .unknownColumn(let table, let column):
            "extract returned the column \(column), which the table \(table) does not declare"
        case .damagedState(let path, let reason): "The projection state in \(path) is damaged: \(reason)"
        case .undrainedChanges(let table, let count):
            "The table \(table) has \(count) row changes not yet drained into a version: drain them before applying others"
        case .unreadableSchema(let type, let reason): "No SQLite schema can be read from \(type): \(reason)"
        case .unappliableChange(let valueId):
            "The change of \(valueId) refers to a value stored elsewhere: apply the differences between two versions instead"
        case .unreadableRow(let table, let id, let reason): "The row \(id) of \(table) is not a model: \(reason)"
        }
    }
}

enum SQLName {
    /// Checks that `name` is a plain identifier, so it can be put in SQL quoted without escaping.
    static func checked(_ name: String) throws -> String {
        guard let first = name.unicodeScalars.first, !("0"..."9").contains(first),
            name.unicodeScalars.allSatisfy({
                $0 == "_" || ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0)
            })
        else { throw ProjectionError.invalidName(name) }
        return name
    }

    static func quoted(_ name: String) -> String { "\"\(name)\"" }
}
