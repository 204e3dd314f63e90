import Foundation
import LLVS

struct BackupCommand: Command {
    static let name = "backup"
    static let summary = "Back up a directory into the store as one new version (unchanged files cost nothing), optionally syncing after."
    static let arguments = "DIR"
    static let options: [OptionSpec] = [.value("to", "REMOTE", "sync to this remote after the backup")]
    static let positionalCount = 1...1

    let directory: String
    let remote: String?

    init(_ arguments: ParsedArguments) throws {
        directory = URL(fileURLWithPath: arguments.positionals[0]).standardizedFileURL.path
        remote = arguments.value("to")
    }

    func run(in context: CommandContext) async throws {
        guard BackupEntry.inspect(directory)?.kind == .directory else { throw CommandError.notFound("\(directory) is not a directory.") }
        let coordinator = try context.openCoordinator()
        let store = coordinator.store
        let current = await coordinator.currentVersionId
        // What the last backup had: its paths, from the map alone (no data read).
        var previous = Set<String>()
        if let current {
            for reference in try store.valueReferences(at: current) where reference.valueId.rawValue.hasPrefix(BackupEntry.prefix) {
                previous.insert(String(reference.valueId.rawValue.dropFirst(BackupEntry.prefix.count)))
            }
        }
        var changes: [Value.Change] = []
        var files: [(id: Value.ID, url: URL, isUpdate: Bool)] = []
        var seen = Set<String>()
        var skipped: [String] = []
        var stored = 0, unchanged = 0

        func walk(_ relative: String) throws {
            let full = relative.isEmpty ? directory : directory + "/" + relative
            let names: [String]
            do { names = try FileManager.default.contentsOfDirectory(atPath: full).sorted() } catch {
                skipped.append("\(full): cannot list (\(error.localizedDescription))")
                return
            }
            for name in names {
                let path = relative.isEmpty ? name : relative + "/" + name
                let absolute = directory + "/" + path
                guard let info = BackupEntry.inspect(absolute) else { continue }
                seen.insert(path)
                let old = try current.flatMap { try store.value(id: BackupEntry.metaId(path), at: $0) }
                    .flatMap { try? JSONDecoder().decode(BackupEntry.self, from: $0.data) }
                var entry = BackupEntry(kind: info.kind, size: info.kind == .file ? info.size : 0, modified: info.modified,
                                        modifiedNanoseconds: info.nanoseconds, mode: info.mode)
                switch info.kind {
                case .directory:
                    entry.modified = 0 // a folder's mtime changes with its contents; it is not worth a version
                    entry.modifiedNanoseconds = 0
                    if old != entry { changes.append(meta(entry, path, exists: old != nil)) }
                    try walk(path)
                case .symlink:
                    guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: absolute) else {
                        skipped.append("\(absolute): cannot read the link"); continue
                    }
                    entry.target = target
                    if old != entry { changes.append(meta(entry, path, exists: old != nil)) } else { unchanged += 1 }
                case .file:
                    if let old, old.kind == .file, old.size == entry.size, old.modified == entry.modified,
                       old.modifiedNanoseconds == entry.modifiedNanoseconds, old.mode == entry.mode {
                        unchanged += 1
                        continue
                    }
                    guard let hash = try? BackupEntry.hash(absolute) else { skipped.append("\(absolute): cannot read it"); continue }
                    entry.sha256 = hash
                    if old?.sha256 != hash || old?.kind != .file {
                        // The store reads the file in pieces as it writes it: any size, bounded memory.
                        files.append((Value.ID(path), URL(fileURLWithPath: absolute), previous.contains(path)))
                        stored += 1
                    }
                    changes.append(meta(entry, path, exists: old != nil))
                }
            }
        }
        try walk("")
        for path in previous.subtracting(seen).sorted() {
            changes.append(.remove(BackupEntry.metaId(path)))
            if let current, try store.value(id: Value.ID(path), at: current) != nil { changes.append(.remove(Value.ID(path))) }
        }
        for problem in skipped { TerminalText.warn("skipped \(problem)") }
        if changes.isEmpty && files.isEmpty {
            context.writeLine("Nothing changed since the last backup (\(seen.count) entries).")
        } else {
            let version = try await coordinator.save(changes, files: files)
            context.writeLine("Backed up \(directory) as version \(version.id): \(stored) file(s) stored, \(unchanged) unchanged, \(previous.subtracting(seen).count) removed.")
        }
        if let remote {
            let connection = try context.connection(remote)
            let result = try await coordinator.exchange(with: connection.exchange(for: store))
            try report(result.retrieve, result.send, context: context)
        }
    }

    private func meta(_ entry: BackupEntry, _ path: String, exists: Bool) -> Value.Change {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let value = Value(id: BackupEntry.metaId(path), data: (try? encoder.encode(entry)) ?? Data())
        return exists ? .update(value) : .insert(value)
    }
}
