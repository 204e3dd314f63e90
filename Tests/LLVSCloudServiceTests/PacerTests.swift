import Foundation
import LLVS
import LLVSCloudService
import LLVSHTTP
import LLVSMocks
import Synchronization
import Testing

@Suite struct PacerTests {
    /// Eight transfers share one remote; one of their requests is answered 429 with Retry-After: 2. Requests already
    /// on the wire cannot be called back, but from the moment the answer arrives no request of that remote goes out
    /// until two seconds have passed; then all of them complete.
    @Test func aRetryAfterHoldsBackEveryTransferOfTheRemote() async throws {
        let server = try MockHTTPServer { _ in .empty(201) }
        defer { server.stop() }
        // Each answer takes 50 ms, so the transfers are still busy when the 429 comes.
        server.faults.setLatency(.milliseconds(50))
        server.faults.inject(.status(429, retryAfter: 2), intoRequest: 12)
        let client = ServiceClient(http: testClient(realSleep: true), authorizer: nil, classifier: PlainClassifier())
        try await withThrowingTaskGroup(of: Void.self) { group in
            for transfer in 0..<8 {
                group.addTask {
                    for piece in 0..<10 {
                        let url = server.baseURL.appendingPathComponent("t\(transfer)/p\(piece)")
                        try await client.checked(HTTPRequest(method: "PUT", url: url, body: .data(Data("x".utf8))), path: url.path)
                    }
                }
            }
            try await group.waitForAll()
        }
        let log = server.log
        let refused = try #require(log.first { $0.status == 429 })
        let afterwards = log.filter { $0.arrival > refused.arrival }
        // Requests the other transfers had already sent before the 429 reached the client arrive at once; none after.
        let early = afterwards.filter { $0.arrival < refused.arrival + 1_900_000_000 }
        #expect(early.allSatisfy { $0.arrival < refused.arrival + 300_000_000 },
                "a request went out during the wait: \(early.map { Double($0.arrival - refused.arrival) / 1e9 })")
        #expect(log.filter { $0.status == 201 }.count == 80)
        #expect(afterwards.contains { $0.arrival >= refused.arrival + 2_000_000_000 })
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
    func advance(_ duration: Duration) { nanoseconds.withLock { $0 += UInt64(duration.components.seconds) * 1_000_000_000 } }
}

final class Recorder<T: Sendable>: Sendable {
    private let items = Mutex<[T]>([])
    func append(_ item: T) { items.withLock { $0.append(item) } }
    var values: [T] { items.withLock { $0 } }
}
