import Foundation
import LLVS
import LLVSBackup
import LLVSRetention
#if canImport(Glibc)
import Glibc
#endif

/// `llvs find`: the paths, in every backup kept, whose name (or, for a pattern with `/`, whose path from the source's
/// root) matches a shell pattern, as `restic find` does. A folder that did not change between backups has one listing,
/// searched once and its matches reused.
struct FindCommand: Command {
    static let name = "find"
    static let summary = "Find files by name (or path) pattern in every backup kept: `llvs find '*.pdf'`."
    static let arguments = "PATTERN"
    static let sourceOption = Option(
        "source", "NAME", "only this backed-up directory (its name or path; repeat for several)", .text,
        repeatable: true)
    static let options: [any DeclaredOption] = [sourceOption, CommonOptions.json]
    static let positionalCount = 1...1
    static let examples = ["llvs find '*.pdf'", "llvs find '/projects/*/notes.md' --source ~/Documents"]

    struct Found: Encodable {
        var version: String
        var date: String
        var source: String
        var path: String
        var size: Int64
    }

    let pattern: String
    let sources: [String]
    let json: Bool

    init(_ arguments: ParsedArguments) throws {
        pattern = arguments.positionals[0]
        sources = arguments.all(Self.sourceOption)
        json = arguments[CommonOptions.json]
    }

    func run(in context: CommandContext) async throws {
        let coordinator = try context.openCoordinator()
        let store = coordinator.store
        guard let current = await coordinator.currentVersionId else {
            if json { try context.writeJSON([Found]()) }
            return
        }
        let catalog = try BackupCatalog(store: store, at: current)
        let wanted = try sources.isEmpty ? nil : Set(sources.map { try catalog.resolvedSource($0) })
        let reader = BackupReader(store: store)
        let byPath = pattern.contains("/")
        let full = pattern.hasPrefix("/") ? pattern : "/" + pattern
        // Matches under a listing, by its hash and the path it sits at (a moved folder is searched again).
        var cache: [String: [(String, Int64)]] = [:]
        func matches(_ hash: ContentHash, at path: String, _ version: Version.ID) throws -> [(String, Int64)] {
            let key = hash.hex + path
            if let known = cache[key] { return known }
            var found: [(String, Int64)] = []
            for entry in try reader.tree(hash, at: version).entries {
                let name = RawName.encode(entry.name)
                let child = path + "/" + name
                if fnmatch(byPath ? full : pattern, byPath ? child : name, 0) == 0 { found.append((child, entry.size)) }
                if case .tree(let inner) = entry.content { found += try matches(inner, at: child, version) }
            }
            cache[key] = found
            return found
        }
        var results: [Found] = []
        for backup in catalog.kept.reversed() where wanted?.contains(backup.source) ?? true {
            guard let root = backup.record.rootHash else { continue }
            for (path, size) in try matches(root, at: "", backup.version) {
                let found = Found(
                    version: backup.version.rawValue, date: VersionSummary.format(backup.date), source: backup.source,
                    path: path, size: size)
                if json {
                    results.append(found)
                } else {
                    context.writeLine("\(found.version)  \(found.date)  \(found.source)  \(found.path)")
                }
            }
        }
        if json { try context.writeJSON(results) }
    }
}
