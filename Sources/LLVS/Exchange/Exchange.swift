import Foundation
import LLVSSupport
import Synchronization

/// Moves versions between a store and a remote. A conforming type says how to list, read and write the
/// remote; the shared logic here works out what is missing on each side and moves it, many transfers at once.
public protocol Exchange: Sendable {
    var store: Store { get }
    /// How many transfers run at once.
    var concurrency: Int { get }
    /// How the remote's version and changes files are encoded; the upstream LLVS layout unless the exchange says
    /// otherwise.
    var codec: any RemoteCodec { get }
    /// The IDs of the versions the remote holds completely, from a full listing.
    func remoteVersionIds() async throws -> Set<Version.ID>
    /// The remote's versions for a sync: by default a full listing; an exchange that keeps a change feed position
    /// answers from the feed. Called once per sync, retrieve or send.
    func remoteListing() async throws -> RemoteListing
    /// Told that a sync which began with `listing` has stored what it retrieved and sent what it could: an exchange
    /// that keeps a change feed position saves it here, and only here, so a crash before never skips anything.
    func syncCompleted(_ listing: RemoteListing, retrieved: RetrieveReport, sent: SendReport) async throws
    func fetchVersion(_ id: Version.ID) async throws -> Version
    /// A version's encoded changes; large ones in a file, so no value is held whole.
    func fetchChanges(of id: Version.ID) async throws -> EncodedChanges
    /// The same, knowing the version (its `valueDataSize`): by default by its ID. An exchange may read small
    /// changes into memory, sparing the temporary file.
    func fetchChanges(of version: Version) async throws -> EncodedChanges
    /// A version's changes encoded for `send`; by default as the store encodes them. An exchange whose remote
    /// transforms what it sends has them written in their final form (`FileStager`).
    func encodeChanges(of version: Version) async throws -> EncodedChanges
    /// Writes a version's changes, then the version itself, so a version is never visible without its changes.
    func send(_ version: Version, changes: EncodedChanges) async throws
    /// Where a version's changes are on the remote, as errors name it.
    func changesLocation(of id: Version.ID) -> String
    /// Told how a retrieve or send is going (for a progress line); nil for none.
    var progress: (@Sendable (ExchangeProgress) -> Void)? { get }
}

/// How far a retrieve or a send has come.
public struct ExchangeProgress: Sendable, Equatable {
    /// Whether versions are coming in or going out.
    public enum Direction: String, Sendable { case retrieving, sending }
    /// Which way this progress is for.
    public var direction: Direction
    /// Versions moved so far.
    public var done: Int
    /// Versions this retrieve or send moves in all.
    public var total: Int
    /// Bytes of value data in the versions done and in all of them (their `valueDataSize`).
    public var bytes: Int64 = 0
    public var totalBytes: Int64 = 0
}

/// What one version's transfer ran into.
public struct ExchangeFailure: Error, Sendable, CustomStringConvertible {
    /// The version whose transfer failed.
    public var versionId: Version.ID
    /// What it failed with.
    public var error: any Error
    public var description: String { "version \(versionId): \(error)" }

    public init(versionId: Version.ID, error: any Error) {
        self.versionId = versionId
        self.error = error
    }
}

/// What a retrieve brought in, and what it could not (yet).
public struct RetrieveReport: Sendable {
    /// Versions added to the store, each after its predecessors.
    public var retrieved: [Version.ID] = []
    /// Versions that could not be read or stored; the rest went on without them.
    public var failures: [ExchangeFailure] = []
    /// Versions left out because a predecessor is on neither side (yet); a later retrieve picks them up.
    public var waitingForPredecessors: [Version.ID] = []
    /// Versions the remote named (in its listing or change feed, or as a predecessor) whose files it did not serve:
    /// not there yet where a service's listings run ahead of its reads or behind its writes (eventual consistency),
    /// or removed. Not failures: later retrieves ask again.
    public var notYetReadable: [Version.ID] = []

    public init() {}
}

/// What a send put on the remote, and what failed.
public struct SendReport: Sendable {
    /// Versions now on the remote, each after its predecessors.
    public var sent: [Version.ID] = []
    /// Versions that could not be sent; the rest went on without them.
    public var failures: [ExchangeFailure] = []

    public init() {}
}

/// What a coordinator's exchange did in both directions.
public struct ExchangeReport: Sendable {
    /// What came in.
    public var retrieve: RetrieveReport
    /// What went out.
    public var send: SendReport
    /// The snapshot taken after the exchange, when the coordinator's policy called for one.
    public var snapshot: SnapshotManifest?
    /// How the remote's versions were learned (a listing, or its change feed).
    public var listing: RemoteListing.Source = .fullListing
}

extension Exchange {
    public var codec: any RemoteCodec { UpstreamRemoteCodec() }

    public func encodeChanges(of version: Version) async throws -> EncodedChanges {
        try codec.encodeChanges(madeInVersionIdentifiedBy: version.id, in: store, stager: nil)
    }

    public var progress: (@Sendable (ExchangeProgress) -> Void)? { nil }
    public func fetchChanges(of version: Version) async throws -> EncodedChanges {
        try await fetchChanges(of: version.id)
    }
    public func changesLocation(of id: Version.ID) -> String { "\(RemoteFormat.changesFolder)/\(id.rawValue)" }
    public func remoteListing() async throws -> RemoteListing {
        RemoteListing(versionIds: try await remoteVersionIds())
    }
    public func syncCompleted(_ listing: RemoteListing, retrieved: RetrieveReport, sent: SendReport) async throws {}

    /// How many versions are prepared at a time: enough to keep every transfer busy, few enough to bound memory.
    var window: Int { max(1, concurrency) * 8 }

    /// Brings in every version the remote has and the store lacks. Versions are added roots first; one that
    /// fails, or whose predecessor never arrives, is reported and does not hold up the others.
    public func retrieve() async throws -> RetrieveReport {
        let listing = try await remoteListing()
        let report = try await retrieve(remoteVersionIds: listing.versionIds)
        try await syncCompleted(listing, retrieved: report, sent: SendReport())
        return report
    }

    /// Retrieves given a listing of the remote already made (an exchange lists once for both directions).
    public func retrieve(remoteVersionIds: Set<Version.ID>) async throws -> RetrieveReport {
        var report = RetrieveReport()
        let local = store.history
        let missing = remoteVersionIds.filter { !local.contains($0) }.sorted()
        guard !missing.isEmpty else { return report }

        // The versions, then any predecessor they name that neither side has: a listing that missed a version (one
        // that lags behind the service's writes) must not keep its descendants out for ever, and its file is read
        // by its name, which the service serves before it lists it.
        var fetched: [Version] = []
        var wanted = missing
        var asked = Set(missing)
        while !wanted.isEmpty {
            var arrived: [Version] = []
            for (id, result) in zip(
                wanted, await mapConcurrently(wanted, limit: concurrency, { try await self.fetchVersion($0) }))
            {
                switch result {
                case .success(let version) where version.id == id: arrived.append(version)
                case .success(let version):
                    report.failures.append(
                        ExchangeFailure(
                            versionId: id, error: ExchangeError.mismatchedVersion(file: id, contains: version.id)))
                case .failure(let error) where Self.isAbsence(error): report.notYetReadable.append(id)
                case .failure(let error): report.failures.append(ExchangeFailure(versionId: id, error: error))
                }
            }
            fetched += arrived
            wanted = Array(
                Set(arrived.flatMap { $0.predecessors?.ids ?? [] }).filter {
                    !local.contains($0) && !asked.contains($0)
                }
            ).sorted()
            asked.formUnion(wanted)
        }

        // Order what arrived so every version follows its predecessors; what cannot be placed waits.
        let placeable = Self.orderedForAdding(fetched, present: local)
        report.waitingForPredecessors = Set(fetched.map(\.id)).subtracting(placeable.map(\.id)).sorted()

        var failed = Set<Version.ID>()
        var deferred = Set<Version.ID>()
        let totalBytes = placeable.reduce(Int64(0)) { $0 + ($1.valueDataSize ?? 0) }
        var doneBytes: Int64 = 0
        let temporaryDirectory = store.temporaryDirectory
        let codec = self.codec
        // Changes are fetched `concurrency` at a time and added in order as they arrive, so writing one version
        // overlaps the transfers of the next ones; at most `window` fetched changes wait to be added.
        await forEachConcurrentlyInOrder(
            placeable, limit: concurrency, ahead: window, { try await self.fetchChanges(of: $0) }
        ) { version, result in
            if let blocked = version.predecessors?.ids.first(where: failed.contains) {
                (try? result.get())?.discard()
                failed.insert(version.id)
                report.failures.append(
                    ExchangeFailure(versionId: version.id, error: ExchangeError.predecessorFailed(blocked)))
                return
            }
            if version.predecessors?.ids.contains(where: deferred.contains) == true {
                (try? result.get())?.discard()
                deferred.insert(version.id)
                report.waitingForPredecessors.append(version.id)
                return
            }
            do {
                let encoded = try result.get()
                defer { encoded.discard() }
                let received = try codec.decodeChanges(
                    encoded, path: changesLocation(of: version.id), temporaryDirectory: temporaryDirectory)
                defer { received.discard() }
                try store.addVersion(version, receiving: received)
                report.retrieved.append(version.id)
                doneBytes += version.valueDataSize ?? 0
                progress?(
                    ExchangeProgress(
                        direction: .retrieving, done: report.retrieved.count, total: placeable.count,
                        bytes: doneBytes, totalBytes: totalBytes))
            } catch  where Self.isAbsence(error) {
                // The version file is served but its changes file not yet: both are asked for again later.
                deferred.insert(version.id)
                report.notYetReadable.append(version.id)
            } catch {
                failed.insert(version.id)
                report.failures.append(ExchangeFailure(versionId: version.id, error: error))
            }
        }
        return report
    }

    /// Whether a failed read says the remote has no such file (yet), rather than that reading it failed.
    static func isAbsence(_ error: any Error) -> Bool {
        switch error {
        case CloudFileSystemError.notFound, ExchangeError.missingOnRemote: true
        case FileError.io(_, _, let code): code == ENOENT
        default: false
        }
    }

    /// The fetched versions whose predecessors are in the store or among them, each after its predecessors
    /// (Kahn's algorithm). A version with a predecessor on neither side is left out, and so are its descendants.
    package static func orderedForAdding(_ fetched: [Version], present: History) -> [Version] {
        let byId = Dictionary(fetched.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        var dependents: [Version.ID: [Version.ID]] = [:]
        var unmet: [Version.ID: Int] = [:]
        var ready: [Version.ID] = []
        for version in fetched {
            let predecessors = (version.predecessors?.ids ?? []).filter { !present.contains($0) }
            guard predecessors.allSatisfy({ byId[$0] != nil }) else { continue }
            for predecessor in predecessors { dependents[predecessor, default: []].append(version.id) }
            unmet[version.id] = predecessors.count
            if predecessors.isEmpty { ready.append(version.id) }
        }
        var ordered: [Version] = []
        ordered.reserveCapacity(fetched.count)
        var index = 0
        while index < ready.count {
            let id = ready[index]
            index += 1
            ordered.append(byId[id]!)
            for dependent in dependents[id] ?? [] {
                guard let count = unmet[dependent] else { continue }
                unmet[dependent] = count - 1
                if count == 1 { ready.append(dependent) }
            }
        }
        return ordered
    }

    /// Sends every version the remote lacks, roots first, many at once.
    public func send() async throws -> SendReport {
        let listing = try await remoteListing()
        let report = try await send(remoteVersionIds: listing.versionIds)
        try await syncCompleted(listing, retrieved: RetrieveReport(), sent: report)
        return report
    }

    /// Sends given a listing of the remote already made. Versions start in order (roots first) and run `concurrency`
    /// at a time without waiting for one another in batches; each computes its changes only when it starts.
    public func send(remoteVersionIds remote: Set<Version.ID>) async throws -> SendReport {
        var report = SendReport()
        let pending = store.history.topologicallySorted { !remote.contains($0.id) }
        let sent = Mutex((count: 0, bytes: Int64(0)))
        let progress = self.progress
        let total = pending.count
        let totalBytes = pending.reduce(Int64(0)) { $0 + ($1.valueDataSize ?? 0) }
        let results = await mapConcurrently(pending, limit: concurrency) { version in
            let encoded = try await self.encodeChanges(of: version)
            defer { encoded.discard() }
            try await self.send(version, changes: encoded)
            let done = sent.withLock { sent in
                sent.count += 1
                sent.bytes += version.valueDataSize ?? 0
                return sent
            }
            progress?(
                ExchangeProgress(
                    direction: .sending, done: done.count, total: total, bytes: done.bytes, totalBytes: totalBytes))
        }
        for (version, result) in zip(pending, results) {
            switch result {
            case .success: report.sent.append(version.id)
            case .failure(let error): report.failures.append(ExchangeFailure(versionId: version.id, error: error))
            }
        }
        return report
    }
}
