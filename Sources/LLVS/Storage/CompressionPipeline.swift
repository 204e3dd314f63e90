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
    /// One value being compressed; `wait` returns its stored form.
    private final class Job: Sendable {
        private let result = Mutex<StoredRecord?>(nil)
        private let done = DispatchSemaphore(value: 0)

        init(_ data: Data, on queue: DispatchQueue) {
            queue.async {
                let record = StoredRecord.compressedIfSmaller(data)
                self.result.withLock { $0 = record }
                self.done.signal()
            }
        }

        func wait() -> StoredRecord {
            done.wait()
            done.signal()  // a second wait (there is none today) must not block
            return result.withLock { $0! }
        }
    }

    private let queue = DispatchQueue(label: "llvs.compression", attributes: .concurrent)
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
        jobs.append((ticket, Job(data, on: queue), data.count))
        bytesInFlight += data.count
        return (ticket, finished)
    }

    /// Waits for every value in flight; returns them, oldest first.
    func drain() -> [(ticket: Int, record: StoredRecord)] {
        defer {
            jobs = []
            bytesInFlight = 0
        }
        return jobs.map { ($0.ticket, $0.job.wait()) }
    }
}
