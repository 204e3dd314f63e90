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
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: root.path).isEmpty, "the suite left something behind")
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
        struct DroppingLastEntry: ForwardingFileSystem {
            let base: any CloudFileSystem
            func list(_ folder: String) async throws -> [CloudItem] {
                Array(try await base.list(folder).sorted { $0.name < $1.name }.dropLast())
            }
        }
        var options = ConformanceOptions()
        options.listingCount = 50
        let report = await ConformanceSuite.run(
            on: DroppingLastEntry(base: LocalFolderFileSystem(root: directory.child("remote"))), options: options)
        let failed = Set(report.results.filter { $0.status == .failed }.map(\.id))
        #expect(failed.contains("listing"))
        #expect(failed.contains("names"))
        #expect(!report.allPassed)
        #expect(report.table.contains("FAILED"))
    }
}
