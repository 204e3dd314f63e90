import Foundation
import LLVS
#if canImport(Glibc)
import Glibc
#endif

struct RestoreCommand: Command {
    static let name = "restore"
    static let summary = "Restore what a backup holds into DEST: all of it, or the PATHs given, at the current version or an older one."
    static let arguments = "DEST [PATH…]"
    static let options: [OptionSpec] = [
        .value("at", "VERSION", "restore this version"),
        .value("before", "DATE", "restore the last version saved before DATE (ISO 8601, as 2026-11-29T12:00:00Z)"),
    ]
    static let positionalCount = 1...Int.max

    let destination: String
    let paths: [String]
    let at: String?
    let before: Date?

    init(_ arguments: ParsedArguments) throws {
        destination = URL(fileURLWithPath: arguments.positionals[0]).standardizedFileURL.path
        paths = Array(arguments.positionals.dropFirst()).map { $0.trimmingCharacters(in: CharacterSet(charactersIn: "/")) }
        at = arguments.value("at")
        if let text = arguments.value("before") {
            guard let date = try? Date(text, strategy: .iso8601) else { throw CommandError.usage("--before needs an ISO 8601 date, as 2026-11-29T12:00:00Z, not \(text)") }
            before = date
        } else {
            before = nil
        }
        guard at == nil || before == nil else { throw CommandError.usage("give --at or --before, not both") }
    }

    func run(in context: CommandContext) async throws {
        let coordinator = try context.openCoordinator()
        let store = coordinator.store
        guard var version = await coordinator.currentVersion else { throw CommandError.notFound("The store is empty.") }
        if let at { version = try context.resolveVersion(at, in: store) }
        if let before {
            // Back along first predecessors to the last version saved before the date.
            while version.date >= before {
                guard let previous = version.predecessors.flatMap({ store.version(identifiedBy: $0.idOfFirst) }) else {
                    throw CommandError.notFound("No version was saved before \(before.formatted(.iso8601)).")
                }
                version = previous
            }
        }
        let entries = try store.valueReferences(at: version.id).compactMap { reference -> String? in
            let id = reference.valueId.rawValue
            guard id.hasPrefix(BackupEntry.prefix) else { return nil }
            let path = String(id.dropFirst(BackupEntry.prefix.count))
            return paths.isEmpty || paths.contains { path == $0 || path.hasPrefix($0 + "/") } ? path : nil
        }.sorted()
        guard !entries.isEmpty else { throw CommandError.notFound("Version \(version.id) holds no backed-up \(paths.isEmpty ? "files" : "files under \(paths.joined(separator: ", "))").") }
        try FileManager.default.createDirectory(atPath: destination, withIntermediateDirectories: true)
        var folders: [(String, BackupEntry)] = []
        for path in entries {
            guard path.split(separator: "/").allSatisfy({ $0 != ".." && $0 != "." }) else { continue }
            guard let metaValue = try store.value(id: BackupEntry.metaId(path), at: version.id),
                  let entry = try? JSONDecoder().decode(BackupEntry.self, from: metaValue.data) else { continue }
            let target = destination + "/" + path
            try FileManager.default.createDirectory(atPath: (target as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            switch entry.kind {
            case .directory:
                try FileManager.default.createDirectory(atPath: target, withIntermediateDirectories: true)
                folders.append((target, entry))
            case .symlink:
                try? FileManager.default.removeItem(atPath: target)
                try FileManager.default.createSymbolicLink(atPath: target, withDestinationPath: entry.target ?? "")
            case .file:
                // Streamed from the store to the file: a large file is never whole in memory.
                if try !store.writeValue(id: Value.ID(path), at: version.id, to: URL(fileURLWithPath: target)) {
                    guard FileManager.default.createFile(atPath: target, contents: Data()) else { throw CommandError.failed("Cannot write \(target).") }
                }
                chmod(target, mode_t(entry.mode))
                setModified(target, seconds: entry.modified, nanoseconds: entry.modifiedNanoseconds)
            }
        }
        for (folder, entry) in folders { chmod(folder, mode_t(entry.mode)) }
        context.writeLine("Restored \(entries.count) entries from version \(version.id) into \(destination).")
    }

    private func setModified(_ path: String, seconds: Int64, nanoseconds: Int) {
        var times = [timespec(tv_sec: Int(seconds), tv_nsec: nanoseconds), timespec(tv_sec: Int(seconds), tv_nsec: nanoseconds)]
        utimensat(AT_FDCWD, path, &times, AT_SYMLINK_NOFOLLOW)
    }
}

struct HistoryCommand: Command {
    static let name = "history"
    static let summary = "List the versions, newest first, in which a backed-up file changed."
    static let arguments = "PATH"
    static let options: [OptionSpec] = [.flag("json", "print JSON")]
    static let positionalCount = 1...1

    struct Change: Encodable {
        var version: String
        var date: String
        var change: String
    }

    let path: String
    let json: Bool

    init(_ arguments: ParsedArguments) throws {
        path = arguments.positionals[0].trimmingCharacters(in: CharacterSet(charactersIn: "/"))
        json = arguments.has("json")
    }

    func run(in context: CommandContext) async throws {
        let coordinator = try context.openCoordinator()
        let store = coordinator.store
        guard let current = await coordinator.currentVersionId else { throw CommandError.notFound("The store is empty.") }
        let history = store.history
        let meta = BackupEntry.metaId(path)
        var changes: [(Version, Change)] = []
        for id in history.ancestors(of: current) {
            guard let version = history.version(id) else { continue }
            // A file's contents decide (a touch alone is no change); links and folders have only their record.
            func stamp(_ at: Version.ID) throws -> Version.ID? {
                try store.value(id: Value.ID(path), at: at)?.storedVersionId ?? store.value(id: meta, at: at)?.storedVersionId
            }
            let now = try stamp(id)
            let before = try version.predecessors.map { try stamp($0.idOfFirst) } ?? nil
            guard now != before else { continue }
            let kind = now == nil ? "removed" : before == nil ? "added" : "changed"
            changes.append((version, Change(version: id.rawValue, date: VersionSummary.format(version.date), change: kind)))
        }
        let ordered = changes.sorted { History.isOrderedBefore($1.0, $0.0) }.map(\.1)
        guard !ordered.isEmpty else { throw CommandError.notFound("No backup holds \(path).") }
        if json { try context.writeJSON(ordered) } else { ordered.forEach { context.writeLine("\($0.version)  \($0.date)  \($0.change)") } }
    }
}
