import CCurl
import Foundation
import Synchronization

/// Drives every transfer of one client through a single libcurl multi handle on a thread of its own, so
/// connections (and HTTP/2 streams) are shared and reused across requests, up to the per-host limit.
// @unchecked: wraps the CURLM handle, which only the engine thread touches (besides curl_multi_wakeup, which
// libcurl documents as safe from any thread); the queue of new transfers is behind a mutex.
final class CurlEngine: @unchecked Sendable {
    private let multi: UnsafeMutableRawPointer
    private let incoming = Mutex<[CurlTransfer]>([])
    private let stopping = Atomic<Bool>(false)
    /// Transfers in flight, by easy handle. Engine thread only.
    private var active: [UnsafeMutableRawPointer: CurlTransfer] = [:]

    private static let globalInit: Bool = curl_global_init(Int(CURL_GLOBAL_DEFAULT)) == CURLE_OK

    init(maximumConnectionsPerHost: Int, maximumTotalConnections: Int) {
        _ = Self.globalInit
        multi = curl_multi_init()
        _ = llvs_curl_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, maximumConnectionsPerHost)
        _ = llvs_curl_multi_setopt_long(multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, maximumTotalConnections)
        _ = llvs_curl_multi_setopt_long(multi, CURLMOPT_PIPELINING, Int(CURLPIPE_MULTIPLEX))
        let thread = Thread { [self] in run() }
        thread.name = "llvs-http"
        thread.start()
    }

    /// Runs a transfer to completion. Cancelling the task stops the transfer.
    func perform(_ transfer: CurlTransfer) async throws -> CurlResult {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                transfer.continuation = continuation
                incoming.withLock { $0.append(transfer) }
                curl_multi_wakeup(multi)
            }
        } onCancel: {
            transfer.cancelled.store(true, ordering: .relaxed)
            curl_multi_wakeup(multi)
        }
    }

    func shutdown() {
        stopping.store(true, ordering: .relaxed)
        curl_multi_wakeup(multi)
    }

    private func run() {
        var running: Int32 = 0
        while !stopping.load(ordering: .relaxed) || !active.isEmpty {
            for transfer in incoming.withLock({ queue in
                defer { queue = [] }; return queue
            }) {
                if stopping.load(ordering: .relaxed) || transfer.cancelled.load(ordering: .relaxed) {
                    transfer.continuation?.resume(throwing: HTTPError.cancelled)
                    continue
                }
                active[transfer.easy] = transfer
                curl_multi_add_handle(multi, transfer.easy)
            }
            if stopping.load(ordering: .relaxed) {
                for transfer in active.values { transfer.cancelled.store(true, ordering: .relaxed) }
            }
            // Cancelled transfers leave at once, not at libcurl's next progress callback (up to a second away).
            for (easy, transfer) in active where transfer.cancelled.load(ordering: .relaxed) {
                curl_multi_remove_handle(multi, easy)
                active[easy] = nil
                let continuation = transfer.continuation
                transfer.continuation = nil
                continuation?.resume(throwing: HTTPError.cancelled)
            }
            curl_multi_perform(multi, &running)
            var remaining: Int32 = 0
            while let message = curl_multi_info_read(multi, &remaining) {
                guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle else { continue }
                let code = message.pointee.data.result
                curl_multi_remove_handle(multi, easy)
                guard let transfer = active.removeValue(forKey: easy) else { continue }
                let continuation = transfer.continuation
                transfer.continuation = nil
                continuation?.resume(with: transfer.result(code: code))
            }
            // Sleeps until a socket is ready, a wakeup arrives, or libcurl's next timeout (at most 100 ms, so
            // cancellations are noticed promptly even while a transfer is idle).
            curl_multi_poll(multi, nil, 0, 100, nil)
        }
        curl_multi_cleanup(multi)
    }
}
