import Foundation
import LLVS
import LLVSSupport
import LLVSCloudService
import Synchronization
import Testing

/// A service held in memory: pieces are appended at their offset; faults make a piece's answer get lost after
/// the service kept the bytes, or make the session expire.
final class MemorySessionService: ResumableUploadProtocol, Sendable {
    struct State {
        var stored: [Int: Data] = [:]
        var sessions = 0
        var sentOffsets: [Int64] = []
        var statusQueries = 0
        /// Piece numbers (from 1, across sessions) whose answer is lost after the bytes were kept.
        var loseAnswerOf: Set<Int> = []
        /// Piece numbers whose session expires instead.
        var expireAt: Set<Int> = []
        var pieces = 0
        var finished = 0
        var abandoned = 0
    }
    let state: Mutex<State>
    let finishesOnLastPiece: Bool

    init(loseAnswerOf: Set<Int> = [], expireAt: Set<Int> = [], finishesOnLastPiece: Bool = true) {
        state = Mutex(State(loseAnswerOf: loseAnswerOf, expireAt: expireAt))
        self.finishesOnLastPiece = finishesOnLastPiece
    }

    func open(size: Int64) async throws -> Int {
        state.withLock { state in
            state.sessions += 1
            state.stored[state.sessions] = Data()
            return state.sessions
        }
    }

    func send(
        _ piece: UploadSource, offset: Int64, length: Int64, total: Int64, to session: Int
    ) async throws -> ResumableProgress<Data> {
        let bytes = try piece.data(offset: offset, length: length)
        return try state.withLock { state in
            state.pieces += 1
            state.sentOffsets.append(offset)
            if state.expireAt.contains(state.pieces) { state.stored[session] = nil; return .expired }
            guard var held = state.stored[session] else { return .expired }
            #expect(Int64(held.count) == offset, "a piece was sent out of order or twice")
            held.append(bytes)
            state.stored[session] = held
            if state.loseAnswerOf.contains(state.pieces) { throw CloudFileSystemError.transient("the answer was lost") }
            if finishesOnLastPiece, held.count == Int(total) { return .done(held) }
            return .received(Int64(held.count))
        }
    }

    func status(of session: Int, total: Int64) async throws -> ResumableProgress<Data> {
        state.withLock { state in
            state.statusQueries += 1
            guard let held = state.stored[session] else { return .expired }
            return finishesOnLastPiece && held.count == Int(total) ? .done(held) : .received(Int64(held.count))
        }
    }

    func finish(_ session: Int, total: Int64) async throws -> ResumableProgress<Data> {
        state.withLock { state in
            state.finished += 1
            return state.stored[session].map { .done($0) } ?? .expired
        }
    }

    func abandon(_ session: Int) async { state.withLock { $0.abandoned += 1 } }
}

@Suite struct ResumableUploaderTests {
    let data = SeededGenerator.bytes(10 * 256 * 1024 + 123, seed: 5)

    @Test func lostAnswersResumeFromWhatTheSessionHoldsAndNothingIsSentTwice() async throws {
        let service = MemorySessionService(loseAnswerOf: [2, 5])
        let uploader = ResumableUploader(chunkSize: 300 * 1024, granularity: 256 * 1024, policy: .immediate)
        #expect(uploader.chunkSize == 256 * 1024, "rounded down to the granularity")
        let result = try await uploader.upload(.data(data), with: service, path: "big")
        #expect(result == data)
        let state = service.state.withLock { $0 }
        #expect(state.sentOffsets == Array(Set(state.sentOffsets)).sorted(), "an acknowledged offset was sent again")
        #expect(state.sentOffsets.count == 11)
        #expect(state.statusQueries == 2)
        #expect(state.sessions == 1)
    }

    @Test func anExpiredSessionStartsOverAndAPieceOfAFileIsReadFromDisk() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("llvs-resumable-\(UUID().uuidString)")
        try data.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let service = MemorySessionService(expireAt: [3])
        let uploader = ResumableUploader(chunkSize: 1024 * 1024, policy: .immediate)
        #expect(try await uploader.upload(try UploadSource(file: file), with: service, path: "big") == data)
        let state = service.state.withLock { $0 }
        #expect(state.sessions == 2)
        #expect(state.abandoned == 1)
    }

    @Test func aServiceThatFinishesSeparatelyIsAskedOnceEveryByteIsHeld() async throws {
        let service = MemorySessionService(finishesOnLastPiece: false)
        let uploader = ResumableUploader(chunkSize: 1024 * 1024, policy: .immediate)
        #expect(try await uploader.upload(.data(data), with: service, path: "big") == data)
        #expect(service.state.withLock { $0.finished } == 1)
    }

    @Test func sessionsThatKeepExpiringEndInAClearError() async throws {
        let service = MemorySessionService(expireAt: Set(1...10))
        let uploader = ResumableUploader(chunkSize: 1024 * 1024, policy: .immediate)
        await #expect(throws: CloudFileSystemError.transient("the upload sessions for big keep expiring")) {
            _ = try await uploader.upload(.data(data), with: service, path: "big")
        }
    }

    @Test func failuresStopCountingWhenTheSessionShowsProgress() async throws {
        let service = MemorySessionService(loseAnswerOf: Set(1...100))
        let uploader = ResumableUploader(
            chunkSize: 4 * 1024 * 1024, policy: RetryPolicy(maximumAttempts: 3, sleep: { _ in }))
        // Each lost answer is followed by a status query that shows progress, so the upload still completes.
        #expect(try await uploader.upload(.data(data), with: service, path: "big") == data)
    }
}
