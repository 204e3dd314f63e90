import Foundation
import LLVSConformance
import Synchronization
import Testing
@testable import LLVS

/// The conformance checks that no broken connector had failed yet, each against a connector broken the way that check
/// is meant to catch (a local folder with one bug): none of them can pass by accident.
@Suite struct BrokenConnectorEachCheckTests {
    let directory = TemporaryDirectory()

    enum Bug: String, CaseIterable, Sendable {
        /// A missing file downloads as empty instead of "not found".
        case missingReadsAsEmpty
        /// A folder that holds anything is not removed, and no error says so.
        case keepsFullFolders
        /// An empty upload is skipped: the file never appears.
        case skipsEmptyFiles
        /// A range is read to the end of the file, whatever its end.
        case ignoresRangeEnds
        /// An upload from a local file that cannot be read leaves an empty file where it was going.
        case failedUploadLeavesAFile
        /// An upload from a local file takes its size first, reads one piece and pads the rest with zeros to that size
        /// (as a connector that trusts the size it took rather than the bytes it can read).
        case padsAShortenedSource
        /// Silently drops an upload that starts while another into the same folder is under way.
        case dropsConcurrentUploads
        /// Removing the run's folder leaves it there.
        case cannotRemoveTheRunsFolder
    }

    /// A local folder with one deliberate bug.
    final class Broken: ForwardingFileSystem, Sendable {
        let base: any CloudFileSystem
        let bug: Bug
        private let inFlight = Mutex(0)
        /// The first parallel upload waits here for a second to start, so two overlap whatever the scheduling.
        private let secondStarted = AsyncStream<Void>.makeStream()

        init(base: any CloudFileSystem, bug: Bug) {
            self.base = base
            self.bug = bug
        }

        func read(_ path: String, range: ByteRange?) async throws -> Data {
            if range == nil, bug == .missingReadsAsEmpty, try await !base.exists(path) { return Data() }
            guard bug == .ignoresRangeEnds, case .bytes(let first, _)? = range else {
                return try await base.read(path, range: range)
            }
            return try await base.read(path, range: .from(first))
        }

        func removeFolder(_ path: String) async throws {
            if bug == .keepsFullFolders, try await !base.listNames(path).isEmpty { return }
            if bug == .cannotRemoveTheRunsFolder, try CloudPath.components(path).count == 1 { return }
            try await base.removeFolder(path)
        }

        func upload(_ source: UploadSource, to path: String, mode: UploadMode) async throws {
            let data: Data
            switch source {
            case .data(let bytes): data = bytes
            case .file(let url, _), .staged(let url, _):
                return try await upload(source, from: url, to: path, mode: mode)
            }
            switch bug {
            case .skipsEmptyFiles where data.isEmpty:
                return
            case .dropsConcurrentUploads where path.contains("/parallel-"):
                let others = inFlight.withLock { count -> Int in
                    count += 1
                    return count - 1
                }
                defer { inFlight.withLock { $0 -= 1 } }
                if others > 0 {
                    secondStarted.continuation.finish()
                    return
                }
                for await _ in secondStarted.stream {}
            default:
                break
            }
            try await base.upload(source, to: path, mode: mode)
        }

        /// A source read from the local file `source`.
        private func upload(_ file: UploadSource, from source: URL, to path: String, mode: UploadMode) async throws {
            switch bug {
            case .failedUploadLeavesAFile where !FileManager.default.fileExists(atPath: source.path):
                try await base.upload(Data(), to: path)
                throw CloudFileSystemError.localFile(path: source.path, message: "it does not exist")
            case .padsAShortenedSource where path.contains("/source-fails-part-way/"):
                guard let size = try? FileManager.default.attributesOfItem(atPath: source.path)[.size] as? Int,
                    let handle = try? FileHandle(forReadingFrom: source)
                else {
                    throw CloudFileSystemError.localFile(path: source.path, message: "cannot read it")
                }
                defer { try? handle.close() }
                var data = try handle.read(upToCount: 1 << 20) ?? Data()
                data.append(Data(count: max(0, size - data.count)))
                try await base.upload(data, to: path)
            default:
                try await base.upload(file, to: path, mode: mode)
            }
        }
    }

    /// Each bug and the check that must catch it.
    static let caught: [(bug: Bug, check: String)] = [
        (.missingReadsAsEmpty, "not-found"), (.keepsFullFolders, "folders"), (.skipsEmptyFiles, "files"),
        (.ignoresRangeEnds, "ranges"),
        (.failedUploadLeavesAFile, "failed-upload"), (.padsAShortenedSource, "source-fails-part-way"),
        (.dropsConcurrentUploads, "concurrency"), (.cannotRemoveTheRunsFolder, "clean-up"),
    ]

    func failedChecks(_ fileSystem: any CloudFileSystem, faults: (any FaultControl)? = nil) async -> Set<String> {
        var options = ConformanceOptions()
        options.largeFileSize = 2 * 1024 * 1024
        options.listingCount = 20
        options.faults = faults
        let report = await ConformanceSuite.run(on: fileSystem, options: options)
        return Set(report.results.filter { $0.status == .failed }.map(\.id))
    }

    @Test(arguments: caught.indices)
    func aBrokenConnectorFailsTheCheckMeantForIt(case index: Int) async throws {
        let (bug, check) = Self.caught[index]
        let failed = await failedChecks(
            Broken(base: LocalFolderFileSystem(root: directory.child(bug.rawValue)), bug: bug))
        #expect(failed.contains(check), "\(bug) should fail \(check); failed: \(failed)")
    }

    /// Without a retry, a dropped connection ends the download it cut.
    @Test func aDroppedConnectionWithoutARetryFails() async throws {
        let faulty = FaultInjectingFileSystem(LocalFolderFileSystem(root: directory.child("dropped")))
        let failed = await failedChecks(faulty, faults: faulty)
        #expect(failed.contains("dropped-connection"), "\(failed)")
    }

    /// A connector that mishandles its credentials once the fault is injected: it never refreshes (an expired token
    /// ends the upload with "unauthorized"), or it takes a refused token for "not there" (a revoked sign-in passes for
    /// an empty remote).
    final class MishandlesTokens: ForwardingFileSystem, FaultControl, Sendable {
        enum Mishandling: Sendable { case neverRefreshes, hidesRefusals }
        let base: any CloudFileSystem
        let mishandling: Mishandling
        private let injected = Mutex(false)
        init(base: any CloudFileSystem, _ mishandling: Mishandling) {
            self.base = base
            self.mishandling = mishandling
        }

        var supportedFaults: Set<InjectedFault> { mishandling == .neverRefreshes ? [.expiredToken] : [.revokedToken] }
        func injectOnce(_ fault: InjectedFault) async { injected.withLock { $0 = true } }

        func upload(_ source: UploadSource, to path: String, mode: UploadMode) async throws {
            if mishandling == .neverRefreshes, injected.withLock({ $0 }) {
                throw CloudFileSystemError.unauthorized("the token has expired")
            }
            try await base.upload(source, to: path, mode: mode)
        }

        func exists(_ path: String) async throws -> Bool {
            if mishandling == .hidesRefusals,
                injected.withLock({
                    let was = $0; $0 = false; return was
                })
            {
                return false
            }
            return try await base.exists(path)
        }
    }

    @Test func anExpiredTokenThatIsNeverRefreshedFails() async throws {
        let broken = MishandlesTokens(base: LocalFolderFileSystem(root: directory.child("expired")), .neverRefreshes)
        let failed = await failedChecks(broken, faults: broken)
        #expect(failed.contains("expired-token"), "\(failed)")
    }

    @Test func aRevokedTokenTakenForNotThereFails() async throws {
        let broken = MishandlesTokens(base: LocalFolderFileSystem(root: directory.child("revoked")), .hidesRefusals)
        let failed = await failedChecks(broken, faults: broken)
        #expect(failed.contains("revoked-token"), "\(failed)")
    }
}
