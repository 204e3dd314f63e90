import LLVS
import LLVSBackup

struct DiffCommand: Command {
    static let name = "diff"
    static let summary =
        "Show what differs from V1 to V2: for two backups the files (+ added, M modified, - removed), else the values."
    static let arguments = "V1 V2"
    static let valuesOption = Flag("values", "the values that differ even when both versions hold backups")
    static let sourceOption = Option(
        "source", "NAME", "the backed-up directory to compare (needed when the store backs up several)", .text)
    static let options: [any DeclaredOption] = [valuesOption, sourceOption, CommonOptions.json]
    static let positionalCount = 2...2
    static let examples = ["llvs diff 3F2A 9C41", "llvs diff 3F2A 9C41 --source ~/Documents"]

    struct Entry: Encodable {
        var change: String
        var id: String
        var size: Int?
    }

    let from: String, to: String, json: Bool, values: Bool, source: String?

    init(_ arguments: ParsedArguments) throws {
        from = arguments.positionals[0]
        to = arguments.positionals[1]
        json = arguments[CommonOptions.json]
        values = arguments[Self.valuesOption]
        source = arguments[Self.sourceOption]
    }

    func run(in context: CommandContext) async throws {
        let store = try context.openCoordinator().store
        let v1 = try context.resolveVersion(from, in: store), v2 = try context.resolveVersion(to, in: store)
        let reader = BackupReader(store: store)
        if !values, try reader.hasBackups(at: v1.id), try reader.hasBackups(at: v2.id) {
            let new = try reader.resolveSource(source, at: v2.id)
            guard let old = try reader.record(new.name, at: v1.id) else {
                throw CommandError.notFound("Version \(v1.id) holds no backup of \(new.name).")
            }
            let changes = try BackupDiff(reader: reader).changes(from: (old, v1.id), to: (new, v2.id))
            if json { try context.writeJSON(changes); return }
            for change in changes {
                let mark = change.change == "added" ? "+" : change.change == "removed" ? "-" : "M"
                let sizes =
                    change.change == "modified"
                    ? change.size.map { size in
                        " (" + (change.sizeBefore.map { ProgressLine.size($0) + " → " } ?? "") + ProgressLine.size(size)
                            + ")"
                    } ?? ""
                    : change.size.map { " (" + ProgressLine.size($0) + ")" } ?? ""
                context.writeLine("\(mark) \(change.path)\(sizes)")
            }
            context.writeLine(
                "\(changes.filter { $0.change == "added" }.count) added, "
                    + "\(changes.filter { $0.change == "modified" }.count) modified, "
                    + "\(changes.filter { $0.change == "removed" }.count) removed.")
            return
        }
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
