import Dispatch
import Foundation
import LLVSCodecs
import Synchronization

/// Compresses values on other threads while their producer goes on (a backup reads and chunks the next file while the
/// last one's chunks compress), and hands them back in the order given, so the producer appends them to its version
/// writer itself: the writer never leaves the producer's thread. At most `byteLimit` bytes are in flight, which
/// bounds the memory they hold (a value larger than that goes alone). Large values come back in the order given; small ones, compressed on the spot, may overtake
/// them.
final class CompressionPipeline {
    /// One value being compressed; `wait` returns its stored form. Whoever claims it first compresses it: a worker
    /// thread, or the producer itself when it would otherwise wait (at a commit, for everything in flight).
    private final class Job: Sendable {
        private enum State {
            case queued(Data)
            case running
            case done(StoredRecord)
        }
        private let state: Mutex<State>
        private let done = DispatchSemaphore(value: 0)

        init(_ data: Data, on workers: CompressionWorkers) {
            state = Mutex(.queued(data))
            workers.run { self.runIfUnclaimed() }
        }

        /// Compresses the value unless someone else has taken it.
        func runIfUnclaimed() {
            let data: Data? = state.withLock { state in
                guard case .queued(let data) = state else { return nil }
                state = .running
                return data
            }
            guard let data else { return }
            let record = StoredRecord.compressedIfSmaller(data)
            state.withLock { $0 = .done(record) }
            done.signal()
        }

        /// The stored form: compressed here if no worker has started on it, else when the worker is done.
        func wait() -> StoredRecord {
            runIfUnclaimed()
            // Each signal is one finished compression; a woken waiter looks again.
            while true {
                if case .done(let record) = state.withLock({ $0 }) { return record }
                done.wait()
            }
        }
    }

    private var jobs: [(ticket: Int, job: Job, bytes: Int)] = []
    private var bytesInFlight = 0
    private var nextTicket = 0
    /// Enough for every processor to have work while the producer makes the next values (chunks are about 1 MiB).
    static let byteLimit = 16 << 20

    /// Values smaller than this are compressed on the caller's thread: handing one to another thread would cost about
    /// as much as compressing it.
    static let inlineLimit = 8 << 10

    /// Starts compressing `data`; returns its ticket and the values that finished to make room (oldest first), each
    /// with its ticket, for the caller to append.
    func submit(_ data: Data) -> (ticket: Int, finished: [(ticket: Int, record: StoredRecord)]) {
        var finished: [(Int, StoredRecord)] = []
        if data.count < Self.inlineLimit {
            let ticket = nextTicket
            nextTicket += 1
            // Appended ahead of larger values still in flight: records may lie in any order in a version.
            return (ticket, [(ticket, StoredRecord.compressedIfSmaller(data))])
        }
        while !jobs.isEmpty, bytesInFlight + data.count > Self.byteLimit {
            let oldest = jobs.removeFirst()
            bytesInFlight -= oldest.bytes
            finished.append((oldest.ticket, oldest.job.wait()))
        }
        let ticket = nextTicket
        nextTicket += 1
        jobs.append((ticket, Job(data, on: .shared), data.count))
        bytesInFlight += data.count
        return (ticket, finished)
    }

    /// Waits for every value in flight; returns them, oldest first.
    func drain() -> [(ticket: Int, record: StoredRecord)] {
        defer {
            jobs = []
            bytesInFlight = 0
        }
        // The newest first: the workers take the oldest, so the producer and they meet in the middle.
        for job in jobs.reversed() { job.job.runIfUnclaimed() }
        return jobs.map { ($0.ticket, $0.job.wait()) }
    }
}

/// Threads of their own that compress, one per processor, started on first use and kept. Not Dispatch's: on Linux
/// Swift's tasks run on Dispatch's global pool, one thread per processor, so a task that waits for a compression
/// there (a backup's walk) leaves it one thread short, and compression ran on one processor while the other waited.
final class CompressionWorkers: Sendable {
    static let shared = CompressionWorkers(count: ProcessInfo.processInfo.activeProcessorCount)

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
