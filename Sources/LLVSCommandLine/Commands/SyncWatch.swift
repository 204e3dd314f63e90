import Foundation
import LLVS
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Set by the SIGINT/SIGTERM handler (a lock-free store, safe in a signal handler) and polled by the watcher.
private let stopRequests = Atomic<Int>(0)

/// Ctrl-C and SIGTERM ask the watcher to stop; a second one ends the process at once. A parent running Swift
/// concurrency may have started this process with signals blocked, so they are unblocked here.
enum StopSignals {
    static func install() {
        var signals = sigset_t()
        sigemptyset(&signals)
        for number in [SIGINT, SIGTERM] {
            sigaddset(&signals, number)
            signal(number) { _ in
                if stopRequests.add(1, ordering: .relaxed).newValue > 1 { _exit(130) }
            }
        }
        pthread_sigmask(SIG_UNBLOCK, &signals, nil)
    }

    static var requested: Bool { stopRequests.load(ordering: .relaxed) > 0 }
}

/// `llvs sync --watch`: syncs again whenever the remote's change feed reports something (waiting on pCloud's own
/// long poll, asking the others' feeds with backoff) or another process adds versions to the store. A remote with no
/// feed (WebDAV, a local folder) is looked at by a sync itself, and the same backoff applies to those looks: the pause
/// between looks starts at one second and doubles while nothing happens, up to `maximumPause`, so an idle watch makes
/// a handful of requests a minute. A failure a retry may cure (the network went away) is reported and waited out the
/// same way. Ctrl-C (or SIGTERM) stops it between two steps or in the middle of one: a sync cut short saved no feed
/// position, so nothing is skipped next time.
struct SyncWatcher {
    let coordinator: StoreCoordinator
    let exchange: CloudFileSystemExchange
    let maximumPause: Duration
    /// One sync, quiet when nothing moved; true when something did.
    let sync: @Sendable () async throws -> Bool
    let context: CommandContext

    func run() async throws {
        StopSignals.install()
        let watching = Task { try await loop() }
        let monitor = Task {
            while !Task.isCancelled, !StopSignals.requested { try? await Task.sleep(for: .milliseconds(100)) }
            watching.cancel()
        }
        defer { monitor.cancel() }
        do {
            try await watching.value
        } catch  where watching.isCancelled {
            // Stopped on request: whatever the cancellation interrupted ends here.
        }
        context.writeLine("Stopped watching.")
    }

    private func loop() async throws {
        var pause = Duration.seconds(1)
        while !Task.isCancelled {
            let started = ContinuousClock.now
            do {
                let storeChanged = try await !coordinator.reloadHistory().isEmpty
                // nil: the remote has no feed (or no position yet), so a sync is how to look.
                let remoteChanged = storeChanged ? nil : try await exchange.waitForRemoteChanges(timeout: pause)
                if storeChanged || remoteChanged != false {
                    let moved = try await sync()
                    // A look by sync that found nothing counts as a quiet look: the pause grows as after a feed's "no".
                    if moved || remoteChanged == true || storeChanged {
                        pause = .seconds(1)
                        continue
                    }
                }
            } catch let error as CloudFileSystemError where error.isRetryable {
                TerminalText.warn("\(error) Trying again in \(pause).")
            }
            let waited = ContinuousClock.now - started
            if waited < pause { try await Task.sleep(for: pause - waited) }
            pause = min(pause * 2, maximumPause)
        }
    }
}
