import Foundation
import LLVSConformance
import Testing
@testable import LLVS
import LLVSSupport
import Synchronization

/// Each conformance check added for #38 fails on a connector broken the way the check is meant to catch, so none of
/// them can pass by accident.
@Suite struct BrokenConnectorTests {
    let directory = TemporaryDirectory()

    /// A local folder with one deliberate bug.
    struct Broken: CloudFileSystem {
        enum Bug: Sendable {
            /// A file already there is not replaced by a new upload (a "create" that meets an existing name and stops).
            case keepsTheFirstWrite
            /// Names are stored in lower case while the connector claims the service keeps case.
            case foldsCase
            /// An upload writes its first half, lets others run, then appends its second half to whatever is there.
            case interleavesWrites
            /// Names are stored composed (NFC), as some services and many Mac tools make them.
            case composesNames
        }
        let base: LocalFolderFileSystem
        let bug: Bug

        func stored(_ path: String) -> String {
            switch bug {
            case .foldsCase: path.lowercased()
            case .composesNames: path.precomposedStringWithCanonicalMapping
            default: path
            }
        }

        var capabilities: CloudCapabilities { .plain }
        func exists(_ path: String) async throws -> Bool { try await base.exists(stored(path)) }
        func list(_ folder: String) async throws -> [CloudItem] { try await base.list(stored(folder)) }
        func listNames(_ folder: String) async throws -> [String] { try await base.listNames(stored(folder)) }
        func metadata(_ path: String) async throws -> CloudItem { try await base.metadata(stored(path)) }
        func stager(for path: String) async throws -> FileStager { .plain }
        /// Every source is read into memory: the bugs are written once, for bytes.
        func upload(_ source: UploadSource, to path: String, mode: UploadMode) async throws {
            let data = try source.data()
            switch bug {
            case .keepsTheFirstWrite:
                if try await base.exists(path), data.count > 1_000_000 { return }
                try await base.upload(data, to: path)
            case .foldsCase, .composesNames:
                try await base.upload(data, to: stored(path))
            case .interleavesWrites:
                let half = data.count / 2
                try await base.upload(data.prefix(half), to: path)
                await Task.yield()
                let there = try await base.download(path)
                try await base.upload(there + data.dropFirst(half), to: path)
            }
        }
        func read(_ path: String, range: ByteRange?) async throws -> Data {
            try await base.read(stored(path), range: range)
        }
        func download(_ path: String, to destination: DownloadDestination) async throws {
            try await base.download(stored(path), to: destination)
        }
        func makeFolder(_ path: String) async throws { try await base.makeFolder(stored(path)) }
        func removeFile(_ path: String) async throws { try await base.removeFile(stored(path)) }
        func removeFolder(_ path: String) async throws { try await base.removeFolder(stored(path)) }
    }

    func failedChecks(
        _ fileSystem: any CloudFileSystem, options: ConformanceOptions = ConformanceOptions()
    ) async -> Set<String> {
        var options = options
        options.largeFileSize = 2 * 1024 * 1024
        options.listingCount = 20
        let report = await ConformanceSuite.run(on: fileSystem, options: options)
        return Set(report.results.filter { $0.status == .failed }.map(\.id))
    }

    /// Each bug and the check that must catch it.
    static let caught: [(bug: Broken.Bug, check: String)] = [
        (.keepsTheFirstWrite, "large-overwrite"), (.foldsCase, "case-only-names"),
        (.composesNames, "unicode-forms"), (.interleavesWrites, "racing-uploads"),
    ]

    @Test(arguments: caught.indices)
    func aBrokenConnectorFailsTheCheckMeantForIt(case index: Int) async throws {
        let (bug, check) = Self.caught[index]
        let failed = await failedChecks(
            Broken(base: LocalFolderFileSystem(root: directory.child("broken-\(index)")), bug: bug))
        #expect(failed.contains(check), "\(bug) should fail \(check); failed: \(failed)")
    }

    /// A connector that leaves what the server got of a cut upload where readers look.
    final class KeepsHalfOfACutUpload: ForwardingFileSystem, FaultControl {
        let base: any CloudFileSystem
        let cutNext = Mutex(0)
        init(base: any CloudFileSystem) { self.base = base }

        var supportedFaults: Set<InjectedFault> { [.droppedMidUpload] }
        func injectOnce(_ fault: InjectedFault) async { cutNext.withLock { $0 += 1 } }

        func upload(_ source: UploadSource, to path: String, mode: UploadMode) async throws {
            let data = try source.data()
            let cut = cutNext.withLock { count -> Bool in
                guard count > 0 else { return false }
                count -= 1
                return true
            }
            guard cut else { return try await base.upload(data, to: path) }
            try await base.upload(data.prefix(data.count / 2), to: path)
            throw CloudFileSystemError.transient("the connection dropped during the upload")
        }
    }

    @Test func anUploadCutOffThatLeavesHalfAFileFails() async throws {
        let broken = KeepsHalfOfACutUpload(base: LocalFolderFileSystem(root: directory.child("halves")))
        var options = ConformanceOptions()
        options.faults = broken
        let failed = await failedChecks(broken, options: options)
        #expect(failed.contains("interrupted-upload"), "\(failed)")
    }

    /// Without a retry, an operation the server carried out but whose answer was lost ends in an error.
    @Test func anAnswerLostWithoutARetryFails() async throws {
        let faulty = FaultInjectingFileSystem(LocalFolderFileSystem(root: directory.child("lost")))
        var options = ConformanceOptions()
        options.faults = faulty
        let failed = await failedChecks(faulty, options: options)
        #expect(failed.contains("answer-lost"), "\(failed)")
    }
}
