import Foundation
import LLVS
import LLVSBackup
import LLVSRetention

/// What `ls` and `dump` share: the backup a command names (a version, or the latest of the source) and a path in it.
struct BackupSelection {
    let reader: BackupReader
    let version: Version.ID
    let record: BackupSourceRecord

    static let sourceOption = Option(
        "source", "NAME", "the backed-up directory (its name or path; needed when the store backs up several)", .text)

    /// `backup` is a version ID (or a unique prefix), or `latest` for the current version.
    init(backup: String, source: String?, context: CommandContext) async throws {
        let coordinator = try context.openCoordinator()
        let store = coordinator.store
        guard let current = await coordinator.currentVersionId else {
            throw CommandError.failed("The store is empty: nothing was saved or backed up into it yet.")
        }
        let version = backup == "latest" ? current : try context.resolveVersion(backup, in: store).id
        if version != current, try store.value(id: BackupObjectID.forgotten(version), at: current) != nil {
            throw CommandError.notFound("The backup of version \(version) was forgotten (`llvs forget`).")
        }
        reader = BackupReader(store: store)
        self.version = version
        record = try reader.resolveSource(source, at: version)
    }

    /// The entry at `path` ('/'-separated from the source's root; empty or "/" for the root).
    func entry(at path: String) throws -> BackupTreeEntry {
        let components = path.split(separator: "/").map { RawName.decode(String($0)) }
        guard let entry = try reader.entry(at: components, of: record, at: version) else {
            throw CommandError.notFound("The backup of \(record.name) at version \(version) holds no \(path).")
        }
        return entry
    }
}

/// `llvs ls`: the entries of a backup under a path, recursively, as restic lists a snapshot.
struct ListCommand: Command {
    static let name = "ls"
    static let summary = "List what a backup holds under a path (all of it by default), recursively."
    static let arguments = "[BACKUP [PATH]]"
    static let longOption = Flag("long", "show each entry's kind and mode, size and modification time")
    static let options: [any DeclaredOption] = [BackupSelection.sourceOption, longOption, CommonOptions.json]
    static let positionalCount = 0...2
    static let examples = ["llvs ls", "llvs ls latest Documents/taxes --long", "llvs ls 3F2A9C docs --json"]

    struct Shown: Encodable {
        var path: String
        var kind: String
        var mode: String
        var size: Int64
        var modified: String
    }

    let backup: String
    let path: String
    let source: String?
    let long: Bool
    let json: Bool

    init(_ arguments: ParsedArguments) throws {
        backup = arguments.positionals.first ?? "latest"
        path = arguments.positionals.count > 1 ? arguments.positionals[1] : ""
        source = arguments[BackupSelection.sourceOption]
        long = arguments[Self.longOption]
        json = arguments[CommonOptions.json]
    }

    func run(in context: CommandContext) async throws {
        let selection = try await BackupSelection(backup: backup, source: source, context: context)
        let top = try selection.entry(at: path)
        let prefix = "/" + path.split(separator: "/").joined(separator: "/")
        var shown: [Shown] = []
        func visit(_ entry: BackupTreeEntry, _ at: String) throws {
            // The root has no listing entry of its own: it is shown with the backup's date.
            let modified =
                at.isEmpty
                ? selection.record.date
                : Date(timeIntervalSince1970: Double(entry.modified) + Double(entry.modifiedNanoseconds) / 1e9)
            let item = Shown(
                path: at.isEmpty ? "/" : at, kind: "\(entry.kind)", mode: String(entry.mode, radix: 8),
                size: entry.size, modified: VersionSummary.format(modified))
            if json { shown.append(item) } else { write(item, context) }
            guard case .tree(let hash) = entry.content else { return }
            for child in try selection.reader.tree(hash, at: selection.version).entries {
                try visit(child, (at == "/" ? "" : at) + "/" + RawName.encode(child.name))
            }
        }
        try visit(top, prefix == "/" ? "" : prefix)
        if json { try context.writeJSON(shown) }
    }

    private func write(_ item: Shown, _ context: CommandContext) {
        guard long else { return context.writeLine(item.path) }
        let size = String(item.size).padding(toLength: 12, withPad: " ", startingAt: 0)
        context.writeLine(
            "\(item.kind.prefix(4).padding(toLength: 5, withPad: " ", startingAt: 0))\(item.mode)  \(size)\(item.modified)  \(item.path)"
        )
    }
}

/// `llvs dump`: one backed-up file's bytes to standard output, as `restic dump` gives them.
struct DumpCommand: Command {
    static let name = "dump"
    static let summary = "Write one backed-up file to standard output (`latest` for the current backup)."
    static let arguments = "BACKUP PATH"
    static let options: [any DeclaredOption] = [BackupSelection.sourceOption]
    static let positionalCount = 2...2
    static let examples = ["llvs dump latest notes/plan.txt", "llvs dump 3F2A9C photos/cat.jpg > cat.jpg"]

    let backup: String
    let path: String
    let source: String?

    init(_ arguments: ParsedArguments) throws {
        backup = arguments.positionals[0]
        path = arguments.positionals[1]
        source = arguments[BackupSelection.sourceOption]
    }

    func run(in context: CommandContext) async throws {
        let selection = try await BackupSelection(backup: backup, source: source, context: context)
        let entry = try selection.entry(at: path)
        guard entry.kind == .file else {
            throw CommandError.usage("\(path) is a \(entry.kind) in that backup; dump writes a file")
        }
        let output = FileHandle.standardOutput
        try selection.reader.writeContents(of: entry, at: selection.version) { output.write($0) }
    }
}
