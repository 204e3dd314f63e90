import Foundation
import LLVS
import LLVSBackup
#if canImport(Glibc)
import Glibc
#endif

struct RestoreCommand: Command {
    static let name = "restore"
    static let summary =
        "Restore what a backup holds into DEST: all of it, or the PATHs given, at the current version or an older one."
    static let arguments = "DEST [PATH…]"
    static let atOption = Option("at", "VERSION", "restore this version", .text)
    static let beforeOption = Option(
        "before", "DATE",
        "restore the last version saved before DATE (2026-11-29, 2026-11-29T12:00:00Z, or 3d for three days ago)",
        .moment)
    static let keepSpecialBitsOption = Flag(
        "keep-special-bits",
        "restore setuid, setgid and sticky bits (dropped by default, as tar does for non-root users)")
    static let sourceOption = Option(
        "source", "NAME",
        "the backed-up directory to restore (its name or path; needed when the store backs up several)", .text)
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
        paths = Array(arguments.positionals.dropFirst()).map {
            $0.trimmingCharacters(in: CharacterSet(charactersIn: "/"))
        }
        at = arguments[Self.atOption]
        before = arguments[Self.beforeOption]
        guard at == nil || before == nil else { throw CommandError.usage("give --at or --before, not both") }
    }

    func run(in context: CommandContext) async throws {
        let coordinator = try context.openCoordinator()
        let store = coordinator.store
        guard var version = await coordinator.currentVersion else {
            throw CommandError.failed("The store is empty: nothing was saved or backed up into it yet.")
        }
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
        if let current = await coordinator.currentVersionId,
            try store.value(id: BackupObjectID.forgotten(version.id), at: current) != nil
        {
            throw CommandError.notFound(
                "The backup of version \(version.id) was forgotten (`llvs forget`), so it is not restored: a prune may "
                    + "have freed its data.")
        }
        if try BackupReader(store: store).hasBackups(at: version.id) {
            var restore = try TreeRestore(
                reader: BackupReader(store: store), version: version.id, destination: destination,
                modeMask: keepSpecialBits ? 0o7777 : 0o777, paths: paths)
            let record = try restore.reader.resolveSource(source, at: version.id)
            try restore.run(record)
            for problem in restore.refused { TerminalText.warn("not restored: \(problem)") }
            for problem in restore.attributeRefusals.prefix(10) { TerminalText.warn("\(problem)") }
            if restore.attributeRefusals.count > 10 {
                TerminalText.warn("… and \(restore.attributeRefusals.count - 10) more extended attributes not restored")
            }
            guard restore.restored > 0 || !restore.refused.isEmpty else {
                throw CommandError.notFound(
                    "Version \(version.id) holds no backed-up files under \(paths.joined(separator: ", ")) in \(record.name)."
                )
            }
            context.writeLine(
                "Restored \(restore.restored) entries of \(record.name) from version \(version.id) into \(destination)."
            )
            if !restore.refused.isEmpty {
                throw CommandError.failed(
                    "\(restore.refused.count) entr\(restore.refused.count == 1 ? "y was" : "ies were") not restored (listed above)."
                )
            }
            return
        }
        let entries = try LegacyBackupLayout.paths(at: version.id, in: store, under: paths)
        guard !entries.isEmpty else {
            throw CommandError.notFound(
                "Version \(version.id) holds no backed-up \(paths.isEmpty ? "files" : "files under \(paths.joined(separator: ", "))")."
            )
        }
        let (restored, refused) = try LegacyBackupLayout.restore(
            entries, at: version.id, from: store, into: destination,
            modeMask: keepSpecialBits ? 0o7777 : 0o777)
        for problem in refused { TerminalText.warn("not restored: \(problem)") }
        context.writeLine("Restored \(restored) entries from version \(version.id) into \(destination).")
        if !refused.isEmpty {
            throw CommandError.failed(
                "\(refused.count) entr\(refused.count == 1 ? "y was" : "ies were") not restored (listed above).")
        }
    }
}
