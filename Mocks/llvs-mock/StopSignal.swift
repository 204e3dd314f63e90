import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// SIGINT and SIGTERM, turned into a byte on a pipe the main thread waits on. The mock then stops as its `stop()`
/// does (sockets closed, temporary storage removed, as the usage promises), rather than exiting from inside a signal
/// handler, where nothing but async-signal-safe calls may run; a mock stopped by Ctrl-C or `kill` left its storage
/// folder (with every file uploaded to it) in the temporary directory.
enum StopSignal {
    private static let ends: (read: Int32, write: Int32) = {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { return (-1, -1) }
        return (fds[0], fds[1])
    }()

    /// Installs the handlers and unblocks the signals: a parent that runs Swift concurrency may have started this
    /// process with them blocked, and then `kill` (and `Process.terminate`) would do nothing.
    static func install() throws {
        guard ends.read >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EMFILE) }
        var signals = sigset_t()
        sigemptyset(&signals)
        for number in [SIGINT, SIGTERM] {
            sigaddset(&signals, number)
            signal(number) { _ in
                var byte: UInt8 = 1
                _ = write(StopSignal.ends.write, &byte, 1)
            }
        }
        pthread_sigmask(SIG_UNBLOCK, &signals, nil)
    }

    /// Returns once SIGINT or SIGTERM has arrived.
    static func wait() {
        var byte: UInt8 = 0
        while read(ends.read, &byte, 1) < 0 && errno == EINTR {}
    }
}
