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
        guard BackupEntry.inspect(LocalPath(directory))?.kind == .directory else { throw CommandError.notFound("\(directory) is not a directory.") }
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
        /// Files whose contents go into the version, by path, with the record that goes beside them.
        var files: [String: PendingFile] = [:]
        var seen = Set<String>()
        var skipped: [String] = []
        var stored = 0, unchanged = 0

        /// `relative` is the folder's path as value IDs spell it; `local` its bytes on disk (names need not be UTF-8).
        func walk(_ relative: String, _ local: LocalPath) throws {
            let names: [[UInt8]]
            do { names = try local.names().sorted { $0.lexicographicallyPrecedes($1) } } catch {
                skipped.append("\(error)")
                return
            }
            for raw in names {
                let name = RawName.encode(raw)
                let path = relative.isEmpty ? name : relative + "/" + name
                let file = local.appending(raw)
                let absolute = file.display
                guard let info = BackupEntry.inspect(file) else { continue }
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
                    try walk(path, file)
                case .symlink:
                    guard let target = file.linkTarget() else {
                        skipped.append("\(absolute): cannot read the link"); continue
                    }
                    entry.target = RawName.encode(target)
                    if old != entry { changes.append(meta(entry, path, exists: old != nil)) } else { unchanged += 1 }
                case .file:
                    if let old, old.kind == .file, old.size == entry.size, old.modified == entry.modified,
                       old.modifiedNanoseconds == entry.modifiedNanoseconds, old.mode == entry.mode {
                        unchanged += 1
                        continue
                    }
                    guard let hash = try? BackupEntry.hash(file) else { skipped.append("\(absolute): cannot read it"); continue }
                    entry.sha256 = hash
                    if old?.sha256 != hash || old?.kind != .file {
                        // The store reads the file in pieces as it writes it (any size, bounded memory) and checks the
                        // bytes it stored are the bytes hashed here.
                        files[path] = PendingFile(path: path, local: file, entry: entry, hadRecord: old != nil,
                                                  isUpdate: previous.contains(path))
                    } else {
                        changes.append(meta(entry, path, exists: old != nil))
                    }
                }
            }
        }
        try walk("", LocalPath(directory))
        for path in previous.subtracting(seen).sorted() {
            changes.append(.remove(BackupEntry.metaId(path)))
            if let current, try store.value(id: Value.ID(path), at: current) != nil { changes.append(.remove(Value.ID(path))) }
        }
        let version = try await save(changes, files: &files, skipped: &skipped, coordinator: coordinator)
        stored = files.count
        for problem in skipped { TerminalText.warn("skipped \(problem)") }
        if let version {
            context.writeLine("Backed up \(directory) as version \(version.id): \(stored) file(s) stored, \(unchanged) unchanged, \(previous.subtracting(seen).count) removed.")
        } else {
            context.writeLine("Nothing changed since the last backup (\(seen.count) entries).")
        }
        if let remote {
            let connection = try context.connection(remote)
            let result = try await coordinator.exchange(with: connection.exchange(for: store))
            try report(result.retrieve, result.send, context: context)
        }
    }

    /// A file to store, and its record.
    struct PendingFile {
        var path: String
        var local: LocalPath
        var entry: BackupEntry
        var hadRecord: Bool
        var isUpdate: Bool
        var attempts = 1
    }

    /// Reads of one file before it counts as changing too fast to back up.
    static let maximumReads = 3

    /// Saves the version. A file that changed between its hashing and its storing fails the save with nothing stored;
    /// it is hashed again and the save retried, and a file that keeps changing is left out (its earlier backup, if
    /// any, stays) and reported. Nil when there was nothing to save.
    private func save(_ changes: [Value.Change], files: inout [String: PendingFile], skipped: inout [String],
                      coordinator: StoreCoordinator) async throws -> Version? {
        while true {
            guard !changes.isEmpty || !files.isEmpty else { return nil }
            let ordered = files.values.sorted { $0.path < $1.path }
            let all = changes + ordered.map { meta($0.entry, $0.path, exists: $0.hadRecord) }
            // A file whose path is not UTF-8 is handed to the store as its open descriptor's /proc path.
            var held: [Int32] = []
            defer { held.forEach { close($0) } }
            var byStorePath: [String: String] = [:]
            var sources: [(id: Value.ID, url: URL, isUpdate: Bool)] = []
            for file in ordered {
                var storePath = file.local.string
                if storePath == nil {
                    let fd = file.local.openForReading()
                    if fd >= 0 { held.append(fd); storePath = "/proc/self/fd/\(fd)" }
                }
                let url = URL(fileURLWithPath: storePath ?? file.local.display)
                byStorePath[url.path] = file.path
                sources.append((id: Value.ID(file.path), url: url, isUpdate: file.isUpdate))
            }
            let expected = Dictionary(uniqueKeysWithValues: ordered.compactMap { file in file.entry.sha256.map { (Value.ID(file.path), $0) } })
            do {
                return try await coordinator.save(all, files: sources, expectedSHA256: expected)
            } catch StoreError.sourceChanged(let storePath) {
                guard let path = byStorePath[storePath], var file = files[path] else { throw StoreError.sourceChanged(path: storePath) }
                let absolute = file.local.display
                file.attempts += 1
                guard file.attempts <= Self.maximumReads, let info = BackupEntry.inspect(file.local), info.kind == .file,
                      let hash = try? BackupEntry.hash(file.local) else {
                    files[path] = nil
                    skipped.append("\(absolute): it kept changing while it was read (\(Self.maximumReads) tries); "
                                   + (file.hadRecord ? "its last backup is kept" : "it is not in this backup"))
                    continue
                }
                file.entry.size = info.size
                file.entry.modified = info.modified
                file.entry.modifiedNanoseconds = info.nanoseconds
                file.entry.mode = info.mode
                file.entry.sha256 = hash
                files[path] = file
            }
        }
    }

    private func meta(_ entry: BackupEntry, _ path: String, exists: Bool) -> Value.Change {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let value = Value(id: BackupEntry.metaId(path), data: (try? encoder.encode(entry)) ?? Data())
        return exists ? .update(value) : .insert(value)
    }
}
