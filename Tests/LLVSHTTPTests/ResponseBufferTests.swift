import Foundation
@testable import LLVSHTTP
import LLVSSupport
import LLVSMocks
import Testing

/// An answer's body in memory: the bytes come back exactly, whatever pieces they arrived in and however the block
/// grew (on the heap, across to pages of its own, then on), and the client's budget is charged for what is held.
@Suite struct ResponseBufferTests {
    @Test(arguments: [1, 4_096, 16_384, 300_000])
    func theBytesComeBackExactlyAcrossEveryGrowth(piece: Int) {
        let buffer = ResponseBuffer()
        let total = 3 << 20 + 12_345
        let source = (0..<total).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 7) }
        var offset = 0
        var capacities: Set<Int> = []
        source.withUnsafeBytes { bytes in
            while offset < total {
                let count = min(piece, total - offset)
                #expect(buffer.grow(to: buffer.capacity(toHold: count, limit: 64 << 20)))
                buffer.append(bytes.baseAddress! + offset, count: count)
                offset += count
                capacities.insert(buffer.capacity)
            }
        }
        #expect(
            capacities.contains { $0 < ResponseBuffer.mappedFrom }
                && capacities.contains { $0 >= ResponseBuffer.mappedFrom },
            "the block grew on the heap and as pages of its own")
        #expect(buffer.take() == Data(source))
        #expect(buffer.count == 0 && buffer.capacity == 0)
    }

    @Test func aBlockNeverGrowsPastTheLimitUnlessTheBytesNeedIt() {
        let buffer = ResponseBuffer()
        #expect(buffer.grow(to: buffer.capacity(toHold: 900_000, limit: 1_000_000)))
        Data(count: 900_000).withUnsafeBytes { buffer.append($0.baseAddress!, count: 900_000) }
        #expect(buffer.capacity(toHold: 50_000, limit: 1_000_000) == 1_000_000)
        #expect(buffer.capacity(toHold: 200_000, limit: 1_000_000) == 1_100_000)
    }

    /// Eight answers longer than any limit, at once: every one is refused, and the budget, charged for each block
    /// while it grows (old and new), never passed its limit and is all given back.
    @Test func endlessAnswersAreChargedForWhatIsHeld() async throws {
        let body = Data(repeating: 0x62, count: 40 << 20)
        let server = try MockHTTPServer { _ in MockResponse(status: 200, body: .data(body)) }
        defer { server.stop() }
        var configuration = HTTPClientConfiguration()
        configuration.maximumBufferedBytes = 48 << 20
        configuration.retryPolicy = RetryPolicy(maximumAttempts: 1, sleep: { _ in })
        let http = HTTPClient(configuration: configuration)
        let failures = await withTaskGroup(of: Bool.self) { group in
            for index in 0..<8 {
                group.addTask {
                    let request = HTTPRequest(
                        url: server.baseURL.appendingPathComponent("endless\(index)"),
                        destination: .memory(limit: 16 << 20))
                    // Refused for its size, and nothing else: any other failure would pass a `try?` as well.
                    do {
                        _ = try await http.send(request)
                        return false
                    } catch HTTPError.responseTooLarge, HTTPError.memoryBudgetExceeded {
                        return true
                    } catch {
                        return false
                    }
                }
            }
            return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(failures == 8)
        #expect(http.memoryBudget.highWaterMark <= 48 << 20)
        #expect(http.memoryBudget.highWaterMark > 16 << 20, "the answers were held at once, up to the budget")
        #expect(http.memoryBudget.inUse == 0)
    }
}
