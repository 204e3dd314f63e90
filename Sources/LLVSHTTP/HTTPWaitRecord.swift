import Foundation
import Synchronization

/// The waits a client decided on because a server asked it to (a Retry-After, the pacer's hold after a refusal) or
/// because a request failed (the retry policy's backoff): what proves that a rate limit was waited out, by the
/// client's own account rather than by a clock. Keeps the latest 256.
public final class HTTPWaitRecord: Sendable {
    private let waits = Mutex<[Duration]>([])
    private let total = Mutex(0)

    public init() {}

    func record(_ wait: Duration) {
        guard wait > .zero else { return }
        waits.withLock { waits in
            waits.append(wait)
            if waits.count > 256 { waits.removeFirst(waits.count - 256) }
        }
        total.withLock { $0 += 1 }
    }

    /// How many waits were recorded so far (more than are kept, once over 256).
    public var count: Int { total.withLock { $0 } }

    /// The waits recorded after the first `count` (a mark taken before), as far as they are kept.
    public func waits(after count: Int) -> [Duration] {
        let newer = self.count - count
        return waits.withLock { Array($0.suffix(max(0, min(newer, $0.count)))) }
    }
}
