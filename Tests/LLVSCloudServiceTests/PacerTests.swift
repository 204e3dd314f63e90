import Foundation
import LLVS
import LLVSSupport
import LLVSCloudService
import LLVSHTTP
import LLVSMocks
import Synchronization
import Testing

@Suite struct PacerTests {
    /// Eight transfers share one remote; one of their requests is answered 429 with Retry-After: 2. Requests already
    /// on the wire cannot be called back, but every request of that remote that starts after the answer waits at
    /// least the two seconds (the pacer's clock is stopped, and the waits it asks for are recorded rather than slept,
    /// so the test is exact however loaded the machine is); then all of them complete.
    @Test func aRetryAfterHoldsBackEveryTransferOfTheRemote() async throws {
        let server = try MockHTTPServer { _ in .empty(201) }
        defer { server.stop() }
        server.faults.inject(.status(429, retryAfter: 2), intoRequest: 12)
        let waits = Recorder<Duration>()
        var configuration = HTTPClientConfiguration()
        configuration.retryPolicy = RetryPolicy(maximumAttempts: 5, sleep: { waits.append($0) })
        let clock = ManualClock()
        let client = ServiceClient(
            http: HTTPClient(configuration: configuration), authorizer: nil, classifier: PlainClassifier(),
            pacer: RequestPacer(now: { clock.now }))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for transfer in 0..<8 {
                group.addTask {
                    for piece in 0..<10 {
                        let url = server.baseURL.appendingPathComponent("t\(transfer)/p\(piece)")
                        try await client.checked(
                            HTTPRequest(method: "PUT", url: url, body: .data(Data("x".utf8))), path: url.path)
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(server.log.filter { $0.status == 201 }.count == 80)
        #expect(server.log.filter { $0.status == 429 }.count == 1)
        // 81 requests in all; those sent before the client had read the 429 went out unpaced (without a pacer, only the
        // refused request itself would wait). The refused request is sent again only after the client read the 429 and
        // held the pacer back, so every request that reached the server from then on waited, except at most one
        // already past the pacer on each of the 7 other transfers: a bound that holds however the tasks were scheduled.
        let log = server.log
        let refused = try #require(log.firstIndex { $0.status == 429 })
        let resent = try #require(log.indices.first { $0 > refused && log[$0].target == log[refused].target })
        #expect(
            waits.values.count >= log.count - resent - 7,
            "only \(waits.values.count) of the \(log.count - resent) requests from the resend on were held back")
        #expect(
            waits.values.allSatisfy { $0 >= .seconds(2) },
            "a request went out within the 2 s: \(waits.values.min() ?? .zero)")
    }

    @Test func thePacerSpacesRequestsAfterARefusalAndEasesBack() async throws {
        let clock = ManualClock()
        let pacer = RequestPacer(minimumInterval: .milliseconds(100), maximumInterval: .seconds(1), now: { clock.now })
        let slept = Recorder<Duration>()
        try await pacer.waitForTurn { slept.append($0) }
        #expect(slept.values.isEmpty, "at full speed nothing waits")
        pacer.slowDown(for: .seconds(3))
        try await pacer.waitForTurn { slept.append($0) }
        #expect(slept.values == [.seconds(3)])
        pacer.slowDown(for: .seconds(1))
        #expect(pacer.currentInterval == .milliseconds(100), "a refusal during the hold is the same episode")
        clock.advance(.seconds(3))
        pacer.slowDown(for: .zero)
        pacer.slowDown(for: .zero)
        #expect(pacer.currentInterval == .milliseconds(400))
        pacer.slowDown(for: .zero)
        pacer.slowDown(for: .zero)
        #expect(pacer.currentInterval == .seconds(1), "capped")
        for _ in 0..<5 { pacer.succeeded() }
        #expect(pacer.currentInterval == .zero, "back to full speed")
    }
}

/// A monotonic clock a test moves by hand.
final class ManualClock: Sendable {
    private let nanoseconds = Mutex<UInt64>(1_000_000_000)
    var now: UInt64 { nanoseconds.withLock { $0 } }
    func advance(_ duration: Duration) {
        nanoseconds.withLock { $0 += UInt64(duration.components.seconds) * 1_000_000_000 }
    }
}

final class Recorder<T: Sendable>: Sendable {
    private let items = Mutex<[T]>([])
    func append(_ item: T) { items.withLock { $0.append(item) } }
    var values: [T] { items.withLock { $0 } }
}
