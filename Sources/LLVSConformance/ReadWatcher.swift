import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Waits until a local file is first read (inotify's IN_ACCESS), so a check can change the file while a connector
/// is in the middle of reading it: after the connector has looked at its size, before it has read it all.
final class ReadWatcher: Sendable {
    /// The inotify descriptor, a plain number: read only by the one thread in `waitForFirstRead`, which closes it.
    private let fd: Int32

    init?(path: String) {
        fd = inotify_init1(Int32(IN_CLOEXEC))
        guard fd >= 0 else { return nil }
        guard inotify_add_watch(fd, path, UInt32(IN_ACCESS)) >= 0 else {
            close(fd)
            return nil
        }
    }

    /// Runs `then` once the file is read or `timeout` passes, on a thread of its own: a blocking wait on one of
    /// Swift's few cooperative threads could starve the very upload it waits for. True when it was read.
    func afterFirstRead(timeout: TimeInterval, then: @escaping @Sendable () -> Void) async -> Bool {
        await withCheckedContinuation { continuation in
            let thread = Thread {
                let read = self.waitForFirstRead(timeout: timeout)
                then()
                continuation.resume(returning: read)
            }
            thread.start()
        }
    }

    /// Blocks until the file is read or `timeout` passes; true when it was read.
    private func waitForFirstRead(timeout: TimeInterval) -> Bool {
        defer { close(fd) }
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, Int32(timeout * 1000)) > 0 else { return false }
        var buffer = [UInt8](repeating: 0, count: 4096)
        return read(fd, &buffer, buffer.count) > 0
    }
}
