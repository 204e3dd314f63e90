import Foundation
import LLVS

/// Sends a backup's versions to its remote while the walk goes on: each checkpoint the walk commits is sent as soon
/// as the send before it is done, so `backup --to` costs about the longer of reading and sending, not their sum. Only
/// what it sent counts: a checkpoint whose send failed is left to the send after the walk, which is the one that
/// reports failures, as before. It sends quietly (the walk's progress line owns the terminal).
final class CheckpointSender: Sendable {
    private let signals: AsyncStream<Void>.Continuation
    private let sending: Task<[Version.ID], Never>

    /// `remote`: the versions the remote held when it was listed.
    init(_ exchange: CloudFileSystemExchange, remote: Set<Version.ID>) {
        let quiet = CloudFileSystemExchange(
            store: exchange.store, fileSystem: exchange.fileSystem, basePath: exchange.basePath,
            concurrency: exchange.concurrency, codec: exchange.codec)
        // Commits that come while a send runs are one more send: it takes every version the remote lacks by then.
        let (stream, signals) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        self.signals = signals
        sending = Task {
            var known = remote
            var sent: [Version.ID] = []
            for await _ in stream {
                guard !Task.isCancelled, let report = try? await quiet.send(remoteVersionIds: known) else { continue }
                known.formUnion(report.sent)
                sent += report.sent
            }
            return sent
        }
    }

    /// The walk committed a version.
    func committed() { signals.yield() }

    /// Waits for the send under way, and gives every version sent so far, each after its predecessors.
    func finish() async -> [Version.ID] {
        signals.finish()
        return await sending.value
    }

    /// Stops after the send under way (which is cancelled): for a walk that failed.
    func stop() async {
        signals.finish()
        sending.cancel()
        _ = await sending.value
    }
}
