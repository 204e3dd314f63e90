import Foundation
import LLVSConformance
import Testing
@testable import LLVS
import LLVSSupport

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
        }
        let base: LocalFolderFileSystem
        let bug: Bug

        func stored(_ path: String) -> String { bug == .foldsCase ? path.lowercased() : path }

        func exists(_ path: String) async throws -> Bool { try await base.exists(stored(path)) }
        func list(_ folder: String) async throws -> [CloudItem] { try await base.list(stored(folder)) }
        func metadata(_ path: String) async throws -> CloudItem { try await base.metadata(stored(path)) }
        func upload(_ data: Data, to path: String) async throws {
            switch bug {
            case .keepsTheFirstWrite:
                if try await base.exists(path), data.count > 1_000_000 { return }
                try await base.upload(data, to: path)
            case .foldsCase:
                try await base.upload(data, to: stored(path))
            case .interleavesWrites:
                let half = data.count / 2
                try await base.upload(data.prefix(half), to: path)
                await Task.yield()
                let there = try await base.download(path)
                try await base.upload(there + data.dropFirst(half), to: path)
            }
        }
        func upload(fileAt source: URL, to path: String) async throws { try await upload(try Data(contentsOf: source), to: path) }
        func download(_ path: String) async throws -> Data { try await base.download(stored(path)) }
        func download(_ path: String, toFileAt destination: URL) async throws { try await base.download(stored(path), toFileAt: destination) }
        func read(_ path: String, range: ByteRange) async throws -> Data { try await base.read(stored(path), range: range) }
        func makeFolder(_ path: String) async throws { try await base.makeFolder(stored(path)) }
        func removeFile(_ path: String) async throws { try await base.removeFile(stored(path)) }
        func removeFolder(_ path: String) async throws { try await base.removeFolder(stored(path)) }
    }

    func failedChecks(_ fileSystem: any CloudFileSystem, options: ConformanceOptions = ConformanceOptions()) async -> Set<String> {
        var options = options
        options.largeFileSize = 2 * 1024 * 1024
        options.listingCount = 20
        let report = await ConformanceSuite.run(on: fileSystem, options: options)
        return Set(report.results.filter { $0.status == .failed }.map(\.id))
    }

    @Test func aLargeOverwriteThatKeepsTheOldFileFails() async throws {
        let failed = await failedChecks(Broken(base: LocalFolderFileSystem(root: directory.child("keeps")), bug: .keepsTheFirstWrite))
        #expect(failed.contains("large-overwrite"), "\(failed)")
    }

    @Test func namesThatLoseTheirCaseFailWhereTheServiceKeepsCase() async throws {
        let failed = await failedChecks(Broken(base: LocalFolderFileSystem(root: directory.child("folds")), bug: .foldsCase))
        #expect(failed.contains("case-only-names"), "\(failed)")
    }

    @Test func racingUploadsThatMixFail() async throws {
        let failed = await failedChecks(Broken(base: LocalFolderFileSystem(root: directory.child("mixes")), bug: .interleavesWrites))
        #expect(failed.contains("racing-uploads"), "\(failed)")
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
