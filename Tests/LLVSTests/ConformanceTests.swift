import Foundation
import LLVSConformance
import Testing
@testable import LLVS
import LLVSSupport

@Suite struct ConformanceTests {
    let directory = TemporaryDirectory()

    func expectAllPassed(_ report: ConformanceReport, skippable: Set<String>) {
        for result in report.results {
            switch result.status {
            case .passed: break
            case .skipped: #expect(skippable.contains(result.id), "\(result.id) was skipped: \(result.message ?? "")")
            case .failed: Issue.record("\(result.id) failed: \(result.message ?? "")")
            }
        }
    }

    @Test func theLocalFolderFileSystemConforms() async throws {
        let root = directory.child("remote")
        let report = await ConformanceSuite.run(on: LocalFolderFileSystem(root: root))
        expectAllPassed(report, skippable: ConformanceSuite.checksNeedingFaults)
        #expect(try FileManager.default.contentsOfDirectory(atPath: root.path).isEmpty, "the suite left something behind")
    }

    @Test func aFlakyFolderBehindTheRetryPolicyConforms() async throws {
        let root = directory.child("remote")
        let flaky = FaultInjectingFileSystem(LocalFolderFileSystem(root: root), failureRate: 0.1, seed: 7)
        var options = ConformanceOptions()
        options.faults = flaky
        let retrying = RetryingFileSystem(flaky, policy: RetryPolicy(maximumAttempts: 10, sleep: { _ in }))
        let report = await ConformanceSuite.run(on: retrying, options: options)
        expectAllPassed(report, skippable: ["expired-token"])
        #expect(flaky.totalCount > 1000)
    }

    @Test func aFileSystemThatMisbehavesFailsTheRightChecks() async throws {
        /// Reports every listing without its last entry, as a buggy paginator would.
        struct DroppingLastEntry: CloudFileSystem {
            let base: LocalFolderFileSystem
            func exists(_ path: String) async throws -> Bool { try await base.exists(path) }
            func list(_ folder: String) async throws -> [CloudItem] { Array(try await base.list(folder).sorted { $0.name < $1.name }.dropLast()) }
            func metadata(_ path: String) async throws -> CloudItem { try await base.metadata(path) }
            func upload(_ data: Data, to path: String) async throws { try await base.upload(data, to: path) }
            func upload(fileAt source: URL, to path: String) async throws { try await base.upload(fileAt: source, to: path) }
            func download(_ path: String) async throws -> Data { try await base.download(path) }
            func download(_ path: String, toFileAt destination: URL) async throws { try await base.download(path, toFileAt: destination) }
            func read(_ path: String, range: ByteRange) async throws -> Data { try await base.read(path, range: range) }
            func makeFolder(_ path: String) async throws { try await base.makeFolder(path) }
            func removeFile(_ path: String) async throws { try await base.removeFile(path) }
            func removeFolder(_ path: String) async throws { try await base.removeFolder(path) }
        }
        var options = ConformanceOptions()
        options.listingCount = 50
        let report = await ConformanceSuite.run(on: DroppingLastEntry(base: LocalFolderFileSystem(root: directory.child("remote"))), options: options)
        let failed = Set(report.results.filter { $0.status == .failed }.map(\.id))
        #expect(failed.contains("listing"))
        #expect(failed.contains("names"))
        #expect(!report.allPassed)
        #expect(report.table.contains("FAILED"))
    }
}
