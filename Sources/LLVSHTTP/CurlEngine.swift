import CCurl
import Foundation
import LLVSSupport
import Synchronization

/// One libcurl easy transfer a `CurlEngine` drives: an HTTP request (`CurlTransfer`), or an SFTP operation of the
/// SFTP connector. The engine adds its handle to its multi handle, and takes it out again when libcurl is done or the
/// transfer is cancelled; what the transfer's callbacks gathered is read by the caller after `perform` returns.
public protocol CurlOperation: AnyObject, Sendable {
    /// The configured easy handle. The engine never frees it: the operation does, once it is done with it.
    var easyHandle: UnsafeMutableRawPointer { get }
    /// Whether the caller gave up on it (read from the engine thread, and from the progress callback).
    var isCancelled: Bool { get }
    /// Marks it given up; the engine takes it out of the multi handle at once.
    func cancel()
}

/// Drives transfers through a single libcurl multi handle on a thread of its own, so connections (HTTP/2 streams,
/// SSH sessions) are shared and reused across transfers, up to the per-host limit; transfers beyond the limit wait in
/// libcurl's queue for a connection to come free.
// @unchecked: wraps the CURLM handle, which only the engine thread touches (besides curl_multi_wakeup, which
// libcurl documents as safe from any thread); the queue of new transfers is behind a mutex.
public final class CurlEngine: @unchecked Sendable {
    private struct Pending {
        let operation: any CurlOperation
        let continuation: CheckedContinuation<CURLcode, any Error>
    }

    private let multi: UnsafeMutableRawPointer
    private let incoming = Mutex<[Pending]>([])
    private let stopping = Atomic<Bool>(false)
    /// Transfers in flight, by easy handle. Engine thread only.
    private var active: [UnsafeMutableRawPointer: Pending] = [:]

    private static let globalInit: Bool = {
        OpenSSLLifetime.keepUntilProcessEnds()
        return curl_global_init(Int(CURL_GLOBAL_DEFAULT)) == CURLE_OK
    }()

    /// Makes libcurl ready for use (once per process); a caller that sets up easy handles before its first transfer
    /// calls this first.
    public static func initializeLibrary() { _ = globalInit }

    /// - Parameters:
    ///   - maximumConnectionsPerHost: connections to one host at once; more transfers wait for one to come free.
    ///   - maximumTotalConnections: connections open at once, to every host.
    ///   - name: the engine thread's name.
    public init(maximumConnectionsPerHost: Int, maximumTotalConnections: Int, name: String = "llvs-http") {
        _ = Self.globalInit
        multi = curl_multi_init()
        _ = llvs_curl_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, maximumConnectionsPerHost)
        _ = llvs_curl_multi_setopt_long(multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, maximumTotalConnections)
        _ = llvs_curl_multi_setopt_long(multi, CURLMOPT_PIPELINING, Int(CURLPIPE_MULTIPLEX))
        let thread = Thread { [self] in run() }
        thread.name = name
        thread.start()
    }

    /// Runs a transfer to completion and gives libcurl's result code. Cancelling the task stops the transfer.
    /// - Throws: `HTTPError.cancelled` when the task was cancelled or the engine shut down.
    public func perform(_ operation: any CurlOperation) async throws -> CURLcode {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                incoming.withLock { $0.append(Pending(operation: operation, continuation: continuation)) }
                curl_multi_wakeup(multi)
            }
        } onCancel: {
            operation.cancel()
            curl_multi_wakeup(multi)
        }
    }

    /// Stops the engine: transfers in flight are cancelled, and the thread ends.
    public func shutdown() {
        stopping.store(true, ordering: .relaxed)
        curl_multi_wakeup(multi)
    }

    private func run() {
        var running: Int32 = 0
        while !stopping.load(ordering: .relaxed) || !active.isEmpty {
            for pending in incoming.withLock({ queue in
                defer { queue = [] }; return queue
            }) {
                if stopping.load(ordering: .relaxed) || pending.operation.isCancelled {
                    pending.continuation.resume(throwing: HTTPError.cancelled)
                    continue
                }
                active[pending.operation.easyHandle] = pending
                curl_multi_add_handle(multi, pending.operation.easyHandle)
            }
            if stopping.load(ordering: .relaxed) {
                for pending in active.values { pending.operation.cancel() }
            }
            // Cancelled transfers leave at once, not at libcurl's next progress callback (up to a second away).
            for (easy, pending) in active where pending.operation.isCancelled {
                curl_multi_remove_handle(multi, easy)
                active[easy] = nil
                pending.continuation.resume(throwing: HTTPError.cancelled)
            }
            curl_multi_perform(multi, &running)
            var remaining: Int32 = 0
            while let message = curl_multi_info_read(multi, &remaining) {
                guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle else { continue }
                let code = message.pointee.data.result
                curl_multi_remove_handle(multi, easy)
                active.removeValue(forKey: easy)?.continuation.resume(returning: code)
            }
            // Sleeps until a socket is ready, a wakeup arrives, or libcurl's next timeout (at most 100 ms, so
            // cancellations are noticed promptly even while a transfer is idle).
            curl_multi_poll(multi, nil, 0, 100, nil)
        }
        curl_multi_cleanup(multi)
    }
}
