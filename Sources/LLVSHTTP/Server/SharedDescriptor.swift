import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A socket one thread reads or waits on while another may close it (a server stopping). Closing the descriptor
/// under a thread that is about to call `recv` or `accept` on it would let that call reach whatever file the number
/// is given to next (another server's connection); so `close` shuts the socket down at once (a blocked call returns)
/// and the number is given back only when no call is using it, and no call starts after `close`.
final class SharedDescriptor: Sendable {
    let fd: Int32
    private struct State {
        var closing = false
        var users = 0
    }
    private let state = Mutex(State())

    init(_ fd: Int32) { self.fd = fd }

    /// Runs `body` with the descriptor; nil once `close` was called.
    func use<T>(_ body: (Int32) throws -> T) rethrows -> T? {
        guard
            state.withLock({ state -> Bool in
                guard !state.closing else { return false }
                state.users += 1
                return true
            })
        else { return nil }
        defer {
            let last = state.withLock { state -> Bool in
                state.users -= 1
                return state.closing && state.users == 0
            }
            if last { Glibc.close(fd) }
        }
        return try body(fd)
    }

    /// Shuts the socket down; the descriptor is closed now, or by the last call still using it.
    func close() {
        let now = state.withLock { state -> Bool in
            guard !state.closing else { return false }
            state.closing = true
            // Under the lock, so the descriptor cannot have been closed by a user finishing meanwhile.
            shutdown(fd, Int32(SHUT_RDWR))
            return state.users == 0
        }
        if now { Glibc.close(fd) }
    }
}
