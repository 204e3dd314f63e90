import Dispatch
import Foundation
import LLVSCodecs
import Synchronization

/// Compresses values on other threads while their producer goes on (a backup reads and chunks the next file while the
/// last one's chunks compress), and hands them back, so the producer appends them to its version writer itself: the
/// writer never leaves the producer's thread. At most `byteLimit` bytes are in flight, which bounds the memory they
/// hold (a value larger than that goes alone). Small values travel in batches: one hand-over per value would cost
/// about as much as compressing it, and compressing them on the producer's thread made it the backup's bottleneck.
/// Values come back in the order their jobs were given; a batch counts as given when it is full (or at `drain`), so
/// a small value may come back after larger ones given later.
final class CompressionPipeline {
    /// Values being compressed together; `wait` returns their stored forms. Whoever claims the job first compresses
    /// it: a worker thread, or the producer itself when it would otherwise wait (at a commit, for everything in
    /// flight).
    private final class Job: Sendable {
        private enum State {
            case queued([Data])
            case running
            case done([StoredRecord])
        }
        private let state: Mutex<State>
        private let done = DispatchSemaphore(value: 0)

        init(_ values: [Data], on workers: CompressionWorkers) {
            state = Mutex(.queued(values))
            workers.run { self.runIfUnclaimed() }
        }

        /// Compresses the values unless someone else has taken them.
        func runIfUnclaimed() {
            let values: [Data]? = state.withLock { state in
                guard case .queued(let values) = state else { return nil }
                state = .running
                return values
            }
            guard let values else { return }
            let records = values.map(StoredRecord.compressedIfSmaller)
            state.withLock { $0 = .done(records) }
            done.signal()
        }

        /// The stored forms: compressed here if no worker has started on them, else when the worker is done.
        func wait() -> [StoredRecord] {
            runIfUnclaimed()
            // Each signal is one finished job; a woken waiter looks again.
            while true {
                if case .done(let records) = state.withLock({ $0 }) { return records }
                done.wait()
            }
        }
    }

    private var jobs: [(tickets: [Int], job: Job, bytes: Int)] = []
    private var bytesInFlight = 0
    private var nextTicket = 0
    /// Small values given since the last batch went.
    private var batch: (tickets: [Int], values: [Data], bytes: Int) = ([], [], 0)
    /// Enough for every processor to have work while the producer makes the next values (chunks are about 1 MiB).
    static let byteLimit = 16 << 20

    /// Values smaller than this wait in a batch: handing one alone to another thread would cost about as much as
    /// compressing it.
    static let batchedLimit = 8 << 10
    /// A batch goes when it holds this many bytes (or `batchCount` values): enough to make a hand-over worth it,
    /// few enough that the workers are never idle for long.
    static let batchBytes = 128 << 10
    static let batchCount = 64

    /// Starts compressing `data`; returns its ticket and the values that finished to make room (oldest first), each
    /// with its ticket, for the caller to append.
    func submit(_ data: Data) -> (ticket: Int, finished: [(ticket: Int, record: StoredRecord)]) {
        let ticket = nextTicket
        nextTicket += 1
        guard data.count >= Self.batchedLimit else {
            batch.tickets.append(ticket)
            batch.values.append(data)
            batch.bytes += data.count
            guard batch.bytes >= Self.batchBytes || batch.values.count >= Self.batchCount else { return (ticket, []) }
            return (ticket, sendBatch())
        }
        return (ticket, start([ticket], [data], bytes: data.count))
    }

    /// Starts a job, first waiting for the oldest ones while the bytes in flight would pass `byteLimit`; returns
    /// what they gave.
    private func start(_ tickets: [Int], _ values: [Data], bytes: Int) -> [(ticket: Int, record: StoredRecord)] {
        var finished: [(Int, StoredRecord)] = []
        while !jobs.isEmpty, bytesInFlight + bytes > Self.byteLimit {
            let oldest = jobs.removeFirst()
            bytesInFlight -= oldest.bytes
            finished += zip(oldest.tickets, oldest.job.wait())
        }
        jobs.append((tickets, Job(values, on: .shared), bytes))
        bytesInFlight += bytes
        return finished
    }

    private func sendBatch() -> [(ticket: Int, record: StoredRecord)] {
        guard !batch.values.isEmpty else { return [] }
        let (tickets, values, bytes) = batch
        batch = ([], [], 0)
        return start(tickets, values, bytes: bytes)
    }

    /// Waits for every value in flight; returns them, oldest first.
    func drain() -> [(ticket: Int, record: StoredRecord)] {
        var finished = sendBatch()
        defer {
            jobs = []
            bytesInFlight = 0
        }
        // The newest first: the workers take the oldest, so the producer and they meet in the middle.
        for job in jobs.reversed() { job.job.runIfUnclaimed() }
        for job in jobs { finished += zip(job.tickets, job.job.wait()).map { ($0, $1) } }
        return finished
    }
}

/// Threads of their own that compress, one per processor but the producer's, started on first use and kept. Not
/// Dispatch's: on Linux Swift's tasks run on Dispatch's global pool, one thread per processor, so a task that waits
/// for a compression there (a backup's walk) leaves it one thread short, and compression ran on one processor while
/// the other waited.
final class CompressionWorkers: Sendable {
    /// One fewer than the processors (but one): the producer, whose thread is the critical path (a backup's walk
    /// reads, hashes, and takes over compression at commits), needs a processor of its own; with a worker for every
    /// processor it shared one, and a first backup on two processors took 5% longer.
    static let shared = CompressionWorkers(count: max(1, ProcessInfo.processInfo.activeProcessorCount - 1))

    private let work = Mutex<[@Sendable () -> Void]>([])
    private let available = DispatchSemaphore(value: 0)

    private init(count: Int) {
        for index in 0..<max(1, count) {
            let thread = Thread { [self] in
                while true {
                    available.wait()
                    let next = work.withLock { $0.isEmpty ? nil : $0.removeFirst() }
                    next?()
                }
            }
            thread.name = "llvs-compress-\(index)"
            thread.start()
        }
    }

    /// Runs `job` on one of the threads.
    func run(_ job: @escaping @Sendable () -> Void) {
        work.withLock { $0.append(job) }
        available.signal()
    }
}
