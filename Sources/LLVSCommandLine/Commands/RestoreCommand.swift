import Foundation
import LLVS
import LLVSBackup
#if canImport(Glibc)
import Glibc
#endif

struct RestoreCommand: Command {
    static let name = "restore"
    static let summary = "Restore what a backup holds into DEST: all of it, or the PATHs given, at the current version or an older one."
    static let arguments = "DEST [PATH…]"
    static let atOption = Option("at", "VERSION", "restore this version", .text)
    static let beforeOption = Option("before", "DATE", "restore the last version saved before DATE (ISO 8601, as 2026-11-29T12:00:00Z)", .isoDate)
    static let keepSpecialBitsOption = Flag("keep-special-bits", "restore setuid, setgid and sticky bits (dropped by default, as tar does for non-root users)")
    static let sourceOption = Option("source", "NAME", "the backed-up directory to restore (its name or path; needed when the store backs up several)", .text)
    static let options: [any DeclaredOption] = [atOption, beforeOption, keepSpecialBitsOption, sourceOption]
    static let positionalCount = 1...Int.max

    let destination: String
    let paths: [String]
    let at: String?
    let before: Date?
    let keepSpecialBits: Bool
    let source: String?

    init(_ arguments: ParsedArguments) throws {
        keepSpecialBits = arguments[Self.keepSpecialBitsOption]
        source = arguments[Self.sourceOption]
        destination = URL(fileURLWithPath: arguments.positionals[0]).standardizedFileURL.path
        paths = Array(arguments.positionals.dropFirst()).map { $0.trimmingCharacters(in: CharacterSet(charactersIn: "/")) }
        at = arguments[Self.atOption]
        before = arguments[Self.beforeOption]
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
        if try BackupReader(store: store).hasBackups(at: version.id) {
            var restore = try TreeRestore(reader: BackupReader(store: store), version: version.id, destination: destination,
                                      modeMask: keepSpecialBits ? 0o7777 : 0o777, paths: paths)
            let record = try restore.reader.resolveSource(source, at: version.id)
            try restore.run(record)
            for problem in restore.refused { TerminalText.warn("not restored: \(problem)") }
            guard restore.restored > 0 || !restore.refused.isEmpty else {
                throw CommandError.notFound("Version \(version.id) holds no backed-up files under \(paths.joined(separator: ", ")) in \(record.name).")
            }
            context.writeLine("Restored \(restore.restored) entries of \(record.name) from version \(version.id) into \(destination).")
            if !restore.refused.isEmpty { throw CommandError.failed("\(restore.refused.count) entr\(restore.refused.count == 1 ? "y was" : "ies were") not restored (listed above).") }
            return
        }
        let entries = try store.valueReferences(at: version.id).compactMap { reference -> String? in
            let id = reference.valueId.rawValue
            guard id.hasPrefix(BackupEntry.prefix) else { return nil }
            let path = String(id.dropFirst(BackupEntry.prefix.count))
            return paths.isEmpty || paths.contains { path == $0 || path.hasPrefix($0 + "/") } ? path : nil
        }.sorted()
        guard !entries.isEmpty else { throw CommandError.notFound("Version \(version.id) holds no backed-up \(paths.isEmpty ? "files" : "files under \(paths.joined(separator: ", "))").") }
        try restore(entries, of: version, from: store, in: context)
    }

    /// Writes the entries inside DEST only: files and folders first, links last as leaves; an entry below a link
    /// the store holds, or below a link or file found in DEST, is refused and reported, never followed.
    private func restore(_ entries: [String], of version: Version, from store: Store, in context: CommandContext) throws {
        let tree = try RestoreTree(destination: destination)
        let modeMask: UInt32 = keepSpecialBits ? 0o7777 : 0o777
        var records: [(path: String, components: [String], entry: BackupEntry)] = []
        var refused: [String] = []
        for path in entries {
            let components = path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
            guard components.allSatisfy({ !$0.isEmpty && $0 != ".." && $0 != "." && !$0.contains("\0") }) else {
                refused.append("\(path): not a path inside DEST")
                continue
            }
            guard let metaValue = try store.value(id: BackupEntry.metaId(path), at: version.id),
                  let entry = try? JSONDecoder().decode(BackupEntry.self, from: metaValue.data) else { continue }
            records.append((path, components, entry))
        }
        let links = Set(records.filter { $0.entry.kind == .symlink }.map(\.path))
        func underLink(_ path: String) -> String? {
            var prefix = Substring(path)
            while let slash = prefix.lastIndex(of: "/") {
                prefix = prefix[..<slash]
                if links.contains(String(prefix)) { return String(prefix) }
            }
            return nil
        }
        var folders: [(components: [String], entry: BackupEntry)] = []
        var restored = 0
        // Files and folders first, links last as leaves.
        for record in records.filter({ $0.entry.kind != .symlink }) + records.filter({ $0.entry.kind == .symlink }) {
            if let link = underLink(record.path) {
                refused.append("\(record.path): it is below \(link), which is a symlink in this backup")
                continue
            }
            do {
                switch record.entry.kind {
                case .directory:
                    try tree.makeDirectory(record.components)
                    folders.append((record.components, record.entry))
                case .file:
                    // Streamed from the store to the file: a large file is never whole in memory.
                    try tree.writeFile(record.components, mode: record.entry.mode & modeMask, modified: record.entry.modifiedTime) { write in
                        try store.writeValue(id: Value.ID(record.path), at: version.id, into: write)
                    }
                case .symlink:
                    try tree.makeLink(record.components, target: record.entry.target ?? "", modified: record.entry.modifiedTime)
                }
                restored += 1
            } catch let refusal as RestoreTree.Refusal {
                refused.append(refusal.description)
            }
        }
        // Deepest first, so a folder made read-only does not stop the ones inside it.
        for folder in folders.sorted(by: { $0.components.count > $1.components.count }) {
            try? tree.finishDirectory(folder.components, mode: folder.entry.mode & modeMask, modified: folder.entry.modifiedTime)
        }
        for problem in refused { TerminalText.warn("not restored: \(problem)") }
        context.writeLine("Restored \(restored) entries from version \(version.id) into \(destination).")
        if !refused.isEmpty { throw CommandError.failed("\(refused.count) entr\(refused.count == 1 ? "y was" : "ies were") not restored (listed above).") }
    }
}

