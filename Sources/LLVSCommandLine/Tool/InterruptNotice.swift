#if canImport(Glibc)
import Glibc
#endif

/// The message and exit of a command stopped by Ctrl-C (or SIGTERM) whose work is whole at any instant (every write
/// is atomic, checkpoints are commits): the handler writes the message the command set and ends the process with
/// 128 + the signal's number, as a shell reports it. Only `write` and `_exit` run in the handler, the two calls a
/// signal handler may make.
enum InterruptNotice {
    static func install(_ message: String) {
        let bytes = Array(("\n" + message + "\n").utf8)
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: bytes.count)
        buffer.initialize(from: bytes, count: bytes.count)
        noticeBytes = UnsafeBufferPointer(start: buffer, count: bytes.count)
        var signals = sigset_t()
        sigemptyset(&signals)
        for number in [SIGINT, SIGTERM] {
            sigaddset(&signals, number)
            signal(number) { number in
                if let notice = noticeBytes { _ = write(2, notice.baseAddress, notice.count) }
                _exit(128 + number)
            }
        }
        pthread_sigmask(SIG_UNBLOCK, &signals, nil)
    }
}

/// Written once, before the handler is installed; read only by the handler.
nonisolated(unsafe) private var noticeBytes: UnsafeBufferPointer<UInt8>?
