import Foundation
import LLVS
import LLVSSupport
import Synchronization

/// What a remote-backed store knows of a value it placed (`PlacedValue`): how its bytes are stored and their CRC-32,
/// from the version's index (`CompactChangesIndex`).
struct RemoteRecord: Sendable, Hashable {
    var encoding: RecordEncoding
    var crc32: UInt32
    /// The sender's prune released the bytes: the record is no range of the file, and reads as damaged (which the
    /// store, having listed it as released, says as released).
    var isReleased = false

    static let released = RemoteRecord(encoding: .plain, crc32: 0, isReleased: true)
}

/// Reads placed values' bytes from the remote's changes files, a byte range each: one request per record, however
/// many readers want it at once (they wait for the one in flight), and none for a record read lately (`RecordCache`).
/// Every range is checked against the length and CRC-32 its index gave before anyone sees it.
final class RemoteRecordReader: Sendable {
    let fileSystem: any CloudFileSystem
    let basePath: String
    private let cache: Mutex<RecordCache<RecordLocation>>
    private let flights = Mutex<[RecordLocation: Task<Data, any Error>]>([:])
    private let counters = Mutex<(requests: Int, bytes: Int64)>((0, 0))

    init(fileSystem: any CloudFileSystem, basePath: String, cacheLimit: Int) {
        self.fileSystem = fileSystem
        self.basePath = basePath
        cache = Mutex(RecordCache(limit: cacheLimit))
    }

    /// Ranged reads made so far and the bytes they brought.
    var requests: (count: Int, bytes: Int64) { counters.withLock { ($0.requests, $0.bytes) } }

    func changesPath(of version: Version.ID) -> String {
        CloudPath.join(basePath, RemoteFormat.changesFolder, version.rawValue)
    }

    /// The stored bytes of `location`: from the cache, from a read already in flight, or from a new ranged read.
    func bytes(at location: RecordLocation, record: RemoteRecord) async throws -> Data {
        if record.isReleased {
            throw RemoteStoreError.damagedRange(
                path: changesPath(of: location.versionId), offset: location.offset,
                reason: "the value's bytes were released by a prune")
        }
        if location.length == 0 { return Data() }
        if let cached = cache.withLock({ $0.value(for: location) }) { return cached }
        return try await flight(for: location, record: record).value
    }

    /// Starts reading a record nobody waits for yet (`prefetchRecords`), unless it is held or in flight; a failure is
    /// left to the read that follows, which asks again.
    func prefetch(_ location: RecordLocation, record: RemoteRecord) {
        guard location.length > 0, !cache.withLock({ $0.contains(location) }) else { return }
        _ = flight(for: location, record: record)
    }

    /// The read of `location` in flight, started when there is none.
    private func flight(for location: RecordLocation, record: RemoteRecord) -> Task<Data, any Error> {
        flights.withLock { flights -> Task<Data, any Error> in
            if let running = flights[location] { return running }
            // Its own task, so a reader that gives up waiting does not cancel it for the others; on the reads'
            // threads, which an unstructured task would not otherwise inherit.
            let started = Task(executorPreference: RemoteReadExecutor.shared) {
                try await self.fetch(location, record: record)
            }
            flights[location] = started
            return started
        }
    }

    private func fetch(_ location: RecordLocation, record: RemoteRecord) async throws -> Data {
        defer { _ = flights.withLock { $0.removeValue(forKey: location) } }
        let data = try await range(of: location.versionId, from: location.offset, count: location.length)
        var crc = CRC32.Running()
        crc.update(data)
        guard crc.value == record.crc32 else {
            throw RemoteStoreError.damagedRange(
                path: changesPath(of: location.versionId), offset: location.offset,
                reason: "its bytes do not match the CRC-32 of its index")
        }
        cache.withLock { $0.insert(data, for: location) }
        return data
    }

    /// `count` bytes from `offset` into the record at `location`, read past the cache (a piece of a large value).
    func blockingPiece(of location: RecordLocation, at offset: Int64, count: Int64) throws -> Data {
        try waitBlocking { try await self.range(of: location.versionId, from: location.offset + offset, count: count) }
    }

    /// One ranged read of a changes file, counted, which must bring exactly `count` bytes.
    private func range(of version: Version.ID, from start: Int64, count: Int64) async throws -> Data {
        let path = changesPath(of: version)
        let data = try await fileSystem.read(path, range: .bytes(start, start + count - 1))
        counters.withLock {
            $0.requests += 1
            $0.bytes += Int64(data.count)
        }
        guard Int64(data.count) == count else {
            throw RemoteStoreError.damagedRange(
                path: path, offset: start, reason: "\(data.count) bytes came where its index says \(count)")
        }
        return data
    }

    /// The same, for a caller on a thread of its own (a file system's reader, a storage call): waits for the read.
    /// Never to be called from a task of the concurrency pool, which it would hold while it waits.
    func blockingBytes(at locations: [(RecordLocation, RemoteRecord)]) throws -> [Data] {
        try waitBlocking {
            try await withThrowingTaskGroup(of: (Int, Data).self) { group in
                for (index, (location, record)) in locations.enumerated() {
                    group.addTask { (index, try await self.bytes(at: location, record: record)) }
                }
                var results = [Data](repeating: Data(), count: locations.count)
                for try await (index, data) in group { results[index] = data }
                return results
            }
        }
    }
}

/// Runs `body` as a task and waits on this thread for its end. The task prefers threads of its own
/// (`RemoteReadExecutor`), so a wait made on a thread of the concurrency pool (two on a two-core machine) never leaves
/// the read it waits for without a thread to run on.
func waitBlocking<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
    let done = DispatchSemaphore(value: 0)
    let outcome = Mutex<Result<T, any Error>?>(nil)
    Task(executorPreference: RemoteReadExecutor.shared) {
        let result: Result<T, any Error>
        do { result = .success(try await body()) } catch { result = .failure(error) }
        outcome.withLock { $0 = result }
        done.signal()
    }
    done.wait()
    guard let result = outcome.withLock({ $0 }) else { throw CancellationError() }
    return try result.get()
}

/// Runs the tasks of blocking reads on a dispatch queue of their own, whose threads libdispatch adds as they are
/// needed (unlike the concurrency pool's, one per core), so readers that wait never starve the reads.
final class RemoteReadExecutor: TaskExecutor {
    static let shared = RemoteReadExecutor()
    private let queue = DispatchQueue(label: "llvs.remote-store.reads", attributes: .concurrent)

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }
}
