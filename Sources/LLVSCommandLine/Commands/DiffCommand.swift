import LLVS

struct DiffCommand: Command {
    static let name = "diff"
    static let summary = "Show the values that differ from V1 to V2: + inserted, ~ updated, - removed."
    static let arguments = "V1 V2"
    static let options: [any DeclaredOption] = [CommonOptions.json]
    static let positionalCount = 2...2

    struct Entry: Encodable {
        var change: String
        var id: String
        var size: Int?
    }

    let from: String, to: String, json: Bool

    init(_ arguments: ParsedArguments) throws {
        from = arguments.positionals[0]
        to = arguments.positionals[1]
        json = arguments[CommonOptions.json]
    }

    func run(in context: CommandContext) async throws {
        let store = try context.openCoordinator().store
        let v1 = try context.resolveVersion(from, in: store), v2 = try context.resolveVersion(to, in: store)
        let entries: [Entry] = try store.valueChanges(madeBetween: v1.id, and: v2.id).map { change in
            switch change {
            case .insert(let value): Entry(change: "inserted", id: value.id.rawValue, size: value.data.count)
            case .update(let value): Entry(change: "updated", id: value.id.rawValue, size: value.data.count)
            case .remove(let id), .preserveRemoval(let id): Entry(change: "removed", id: id.rawValue)
            case .preserve(let reference): Entry(change: "updated", id: reference.valueId.rawValue)
            }
        }
        if json { try context.writeJSON(entries); return }
        for entry in entries {
            let mark = entry.change == "inserted" ? "+" : entry.change == "updated" ? "~" : "-"
            context.writeLine("\(mark) \(entry.id)")
        }
    }
}
