import Foundation
import LLVS
import LLVSBackup
import LLVSSupport

/// `llvs check --remote R`: whether a remote holds whole versions, read from the remote alone (no clone, nothing
/// stored). Every version file is read and decoded, has its changes file, and names predecessors the remote holds;
/// with data reading every changes file (or part N of M of them, by the hash of the version's ID) is read and decoded too (a compact one's checksum, each compressed value's
/// size), its values' sizes add up to what its version says, each backup chunk's bytes have its name, and its index
/// (where there is one) describes it.
public struct RemoteCheck: Sendable {
    public struct Problem: Encodable, Equatable, Sendable {
        public var version: String
        public var reason: String
    }

    public struct Report: Encodable, Sendable {
        /// The remote's layout (`RemoteFormatRecord`): what its files were read as.
        public var format = ""
        public var versions = 0
        public var changesRead = 0
        public var bytesRead: Int64 = 0
        public var problems: [Problem] = []
    }

    public let exchange: CloudFileSystemExchange
    public let reading: RepositoryCheck.DataReading

    public init(exchange: CloudFileSystemExchange, reading: RepositoryCheck.DataReading) {
        self.exchange = exchange
        self.reading = reading
    }

    public func run() async throws -> Report {
        var report = Report()
        report.format = exchange.codec.name
        let ids = try await exchange.remoteVersionIds()
        report.versions = ids.count
        let probe = exchange.changesLocation(of: Version.ID("x"))
        let changesFolder = String(probe.dropLast(2))
        let changes = Set(try await exchange.fileSystem.listNames(changesFolder))
        let indexes: Set<String>
        do {
            indexes = Set(try await exchange.fileSystem.listNames(exchange.indexesFolder))
        } catch CloudFileSystemError.notFound {
            indexes = []
        }
        let sorted = ids.sorted { $0.rawValue < $1.rawValue }
        let exchange = self.exchange, reading = self.reading
        let outcomes = await mapConcurrently(sorted, limit: max(1, exchange.concurrency)) { id in
            try await Self.check(
                id, in: exchange, readData: reading.includes(Value.ID(id.rawValue)),
                indexed: indexes.contains(id.rawValue))
        }
        for (id, outcome) in zip(sorted, outcomes) {
            if !changes.contains(id.rawValue) {
                report.problems.append(Problem(version: id.rawValue, reason: "it has no changes file"))
            }
            switch outcome {
            case .failure(let error):
                report.problems.append(Problem(version: id.rawValue, reason: "\(error)"))
            case .success(let checked):
                for predecessor in checked.version.predecessors?.ids ?? [] where !ids.contains(predecessor) {
                    report.problems.append(
                        Problem(version: id.rawValue, reason: "its predecessor \(predecessor) is not on the remote"))
                }
                report.problems += checked.problems.map { Problem(version: id.rawValue, reason: $0) }
                if checked.bytesRead != nil { report.changesRead += 1 }
                report.bytesRead += checked.bytesRead ?? 0
            }
        }
        return report
    }

    private struct Checked: Sendable {
        var version: Version
        var problems: [String] = []
        var bytesRead: Int64?
    }

    private static func check(
        _ id: Version.ID, in exchange: CloudFileSystemExchange, readData: Bool, indexed: Bool
    ) async throws
        -> Checked
    {
        var checked = Checked(version: try await exchange.fetchVersion(id))
        guard readData else { return checked }
        let encoded = try await exchange.fetchChanges(of: id)
        defer { encoded.discard() }
        if indexed {
            let path = exchange.indexLocation(of: id)
            do {
                let index = try CompactChangesIndex.decode(try await exchange.fileSystem.download(path), path: path)
                checked.problems += try index.mismatches(with: encoded, path: exchange.changesLocation(of: id))
            } catch let error as ExchangeError {
                checked.problems.append("\(error)")
            }
        }
        let received = try exchange.codec.decodeChanges(
            encoded, path: exchange.changesLocation(of: id), temporaryDirectory: exchange.store.temporaryDirectory)
        defer { received.discard() }
        var total: Int64 = 0
        func value(_ valueId: Value.ID, _ feed: ((Data) throws -> Void) throws -> Void) {
            // Only a chunk's bytes are hashed: its name is their hash.
            let chunk = BackupObjectID.chunkHash(in: valueId)
            let digest = chunk.map { _ in DigestStream(.sha256) }
            var size: Int64 = 0
            do {
                try feed { piece in
                    size += Int64(piece.count)
                    digest?.update(piece)
                }
            } catch {
                checked.problems.append("value \(valueId): \(error)")
                return
            }
            total += size
            if let chunk, let digest, digest.finalizeHex() != chunk.hex {
                checked.problems.append("chunk \(chunk.hex): its bytes do not have its hash")
            }
        }
        for change in received.changes {
            switch change {
            case .insert(let inserted), .update(let inserted): value(inserted.id) { try $0(inserted.data) }
            case .remove, .preserve, .preserveRemoval: break
            }
        }
        for file in received.files {
            value(file.id) { try ReadableFile(path: file.url.path).forEachPiece($0) }
        }
        for stored in received.stored {
            if case .released = stored.bytes {
                total += stored.size
                continue
            }
            value(stored.id) { try stored.forEachDecodedPiece($0) }
        }
        if let declared = checked.version.valueDataSize, declared != total, checked.problems.isEmpty {
            checked.problems.append("its changes hold \(total) bytes of values where the version says \(declared)")
        }
        checked.bytesRead = total
        return checked
    }
}
