import Foundation
import LLVS
import LLVSBackup
import LLVSSupport

/// `llvs check`: whether a store holds everything its history and its kept backups need.
///
/// Every version's map is read (each shared node once, its checksum verified); every backup not forgotten has each
/// listing read and decoded, and each chunk its files name looked up in its version. With data reading, the stored
/// values (all, or one part of `count`, chosen by the hash of the value's ID) are read whole, checked against their
/// checksums and sizes, and a chunk against its name. Each problem then names the backups and file paths it damages,
/// found by a second walk that runs only when something is wrong.
public struct RepositoryCheck: Sendable {
    public enum DataReading: Equatable, Sendable {
        case none
        case all
        /// Part `part` (from 1) of `count`.
        case subset(part: Int, count: Int)

        /// Parses `N/M` (1 ≤ N ≤ M); nil for anything else.
        public init?(subset text: String) {
            let parts = text.split(separator: "/", omittingEmptySubsequences: false)
            guard parts.count == 2, let part = Int(parts[0]), let count = Int(parts[1]), count >= 1, part >= 1,
                part <= count
            else { return nil }
            self = .subset(part: part, count: count)
        }

        /// Whether the reading takes the value (or, for a remote, the version) of this ID.
        public func includes(_ id: Value.ID) -> Bool {
            switch self {
            case .none: false
            case .all: true
            case .subset(let part, let count):
                SHA256.digest(id.rawValue).prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) } % UInt64(count)
                    == UInt64(part - 1)
            }
        }
    }

    /// A backup a problem damages, and the paths in it (up to `pathLimit`; `pathCount` says how many in all).
    public struct DamagedBackup: Encodable, Equatable, Sendable {
        public var version: String
        public var source: String
        public var date: Date
        public var paths: [String]
        public var pathCount: Int
    }

    /// One thing wrong: the object (a version's map, a listing, a chunk, a value), why, and what it damages.
    public struct Problem: Encodable, Equatable, Sendable {
        public var object: String
        public var reason: String
        public var backups: [DamagedBackup]
    }

    public struct Report: Encodable, Sendable {
        public var versions = 0
        public var backups = 0
        public var forgottenBackups = 0
        public var listings = 0
        public var chunks = 0
        public var valuesRead = 0
        public var bytesRead: Int64 = 0
        /// Bytes of the values the reading could have chosen (all stored values), for the fraction a subset read.
        public var bytesStored: Int64 = 0
        public var problems: [Problem] = []

        public init() {}
    }

    public static let pathLimit = 20

    public let store: Store
    public let current: Version.ID
    public let reading: DataReading

    public init(store: Store, at current: Version.ID, reading: DataReading = .none) {
        self.store = store
        self.current = current
        self.reading = reading
    }

    /// What is damaged: listings and chunks by hash (with why), and other values by ID.
    private struct Damage {
        var listings: [ContentHash: String] = [:]
        var chunks: [ContentHash: String] = [:]
        var isEmpty: Bool { listings.isEmpty && chunks.isEmpty }
    }

    public func run() throws -> Report {
        var report = Report()
        var damage = Damage()
        let versions = store.history.topologicallySorted().map(\.id)
        report.versions = versions.count
        try checkValues(of: versions, into: &report, damage: &damage)
        let catalog = try BackupCatalog(store: store, at: current)
        let kept = catalog.kept
        report.backups = kept.count
        report.forgottenBackups = catalog.backups.count - kept.count
        try checkBackups(kept, into: &report, damage: &damage)
        if !damage.isEmpty { try name(damage, in: kept, into: &report) }
        return report
    }

    /// The maps of every version, and (when reading) the values they name.
    private func checkValues(of versions: [Version.ID], into report: inout Report, damage: inout Damage) throws {
        // A prune's released records are gone on purpose: no kept backup names them.
        var read = try store.releasedRecords()
        var problems: [Problem] = []
        try store.checkMaps(of: versions) { version, error in
            problems.append(Problem(object: "the map of version \(version)", reason: "\(error)", backups: []))
        } entry: { entry in
            guard reading != .none, read.insert(entry.location).inserted else { return }
            report.bytesStored += entry.size
            guard reading.includes(entry.valueId) else { return }
            let chunk = BackupObjectID.chunkHash(in: entry.valueId)
            let digest = chunk.map { _ in DigestStream(.sha256) }
            do {
                try store.readStoredValue(entry) { piece in
                    digest?.update(piece)
                    report.bytesRead += Int64(piece.count)
                }
                report.valuesRead += 1
                if let chunk, let digest, digest.finalizeHex() != chunk.hex {
                    damage.chunks[chunk] =
                        "its bytes do not have its hash (stored in version \(entry.location.versionId))"
                }
            } catch {
                if let chunk {
                    damage.chunks[chunk] = "\(error)"
                } else if let listing = BackupObjectID.listingHash(in: entry.valueId) {
                    damage.listings[listing] = "\(error)"
                } else {
                    problems.append(
                        Problem(
                            object: "value \(entry.valueId) stored in version \(entry.location.versionId)",
                            reason: "\(error)", backups: []))
                }
            }
        }
        report.problems += problems
    }

    /// Every listing of the kept backups read and decoded, every chunk looked up; each once, by hash.
    private func checkBackups(_ backups: [CatalogedBackup], into report: inout Report, damage: inout Damage) throws {
        var listings = Set<ContentHash>()
        var chunks = Set<ContentHash>()
        for backup in backups {
            guard let root = backup.record.rootHash else { continue }
            var stack = [root]
            while let hash = stack.popLast() {
                guard listings.insert(hash).inserted, damage.listings[hash] == nil else { continue }
                let tree: BackupTree
                do {
                    tree = try readListing(hash, at: backup.version)
                } catch {
                    damage.listings[hash] = Self.reason(error)
                    continue
                }
                for entry in tree.entries {
                    switch entry.content {
                    case .tree(let child): stack.append(child)
                    case .chunks(let hashes):
                        for chunk in hashes where chunks.insert(chunk).inserted {
                            let id = BackupObjectID.chunk(chunk)
                            // Named by a backup made while a prune ran elsewhere, a chunk may be held by another
                            // version only, where the reader finds it.
                            if try store.storedEntry(id: id, at: backup.version) == nil,
                                try BackupObjectLookup(store: store).elsewhere(id, hash: chunk) == nil
                            {
                                damage.chunks[chunk] = "the store does not hold it"
                            }
                        }
                    case .embedded, .link, .device: break
                    }
                }
            }
        }
        report.listings = listings.count
        report.chunks = chunks.count
    }

    private func readListing(_ hash: ContentHash, at version: Version.ID) throws -> BackupTree {
        let id = BackupObjectID.tree(hash)
        var data = Data()
        if let entry = try store.storedEntry(id: id, at: version) {
            try store.readStoredValue(entry) { data.append($0) }
        } else if let found = try BackupObjectLookup(store: store).elsewhere(id, hash: hash) {
            data = found
        } else {
            throw BackupError.missingObject(id: id.rawValue)
        }
        guard ContentHash(of: data) == hash else {
            throw BackupError.damagedObject(id: id.rawValue, reason: "its bytes do not have its hash")
        }
        return try BackupTree(decoding: data, id: id.rawValue)
    }

    /// Walks every kept backup again, whole, to name the paths each damaged object takes away.
    private func name(_ damage: Damage, in backups: [CatalogedBackup], into report: inout Report) throws {
        var named: [String: (reason: String, backups: [DamagedBackup])] = [:]
        func note(_ object: String, _ reason: String, _ backup: CatalogedBackup, _ path: String) {
            var entry = named[object] ?? (reason, [])
            if entry.backups.last?.version != backup.version.rawValue {
                entry.backups.append(
                    DamagedBackup(
                        version: backup.version.rawValue, source: backup.source, date: backup.date, paths: [],
                        pathCount: 0))
            }
            let last = entry.backups.count - 1
            if entry.backups[last].paths.count < Self.pathLimit { entry.backups[last].paths.append(path) }
            entry.backups[last].pathCount += 1
            named[object] = entry
        }
        for backup in backups {
            guard let root = backup.record.rootHash else { continue }
            var stack: [(ContentHash, String)] = [(root, "")]
            while let (hash, path) = stack.popLast() {
                if let reason = damage.listings[hash] {
                    note("listing \(hash.hex)", reason, backup, path.isEmpty ? "/" : path)
                    continue
                }
                guard let tree = try? readListing(hash, at: backup.version) else { continue }
                for entry in tree.entries {
                    let child = path + "/" + RawName.encode(entry.name)
                    switch entry.content {
                    case .tree(let hash): stack.append((hash, child))
                    case .chunks(let hashes):
                        for chunk in hashes {
                            if let reason = damage.chunks[chunk] { note("chunk \(chunk.hex)", reason, backup, child) }
                        }
                    case .embedded, .link, .device: break
                    }
                }
            }
        }
        let listed = Set(named.keys)
        for (hash, reason) in damage.listings where !listed.contains("listing \(hash.hex)") {
            named["listing \(hash.hex)"] = (reason, [])
        }
        for (hash, reason) in damage.chunks where !listed.contains("chunk \(hash.hex)") {
            named["chunk \(hash.hex)"] = (reason, [])
        }
        report.problems += named.sorted { $0.key < $1.key }.map { object, found in
            Problem(object: object, reason: found.reason, backups: found.backups)
        }
    }

    private static func reason(_ error: any Error) -> String {
        switch error {
        case BackupError.missingObject: "the store does not hold it"
        case BackupError.damagedObject(_, let reason): reason
        default: "\(error)"
        }
    }
}
