import Foundation
import Testing
@testable import LLVSBackup

/// The pattern rules of `BackupExclusions`: names at any depth, anchored paths, folders only with a trailing `/`.
struct BackupExclusionsTests {
    func excludes(_ patterns: [String], _ path: String, folder: Bool = false) -> Bool {
        let name = path.split(separator: "/").last.map(String.init) ?? ""
        return BackupExclusions(patterns: patterns).excludes(
            name: Array(name.utf8), path: Array(path.utf8), isFolder: folder)
    }

    @Test func aPatternWithoutSlashMatchesNamesAtAnyDepth() {
        #expect(excludes(["*.tmp"], "/a.tmp"))
        #expect(excludes(["*.tmp"], "/deep/down/b.tmp"))
        #expect(!excludes(["*.tmp"], "/a.tmpx"))
        #expect(excludes(["node_modules"], "/web/node_modules", folder: true))
    }

    @Test func aPatternWithSlashIsAnchoredAndStarStaysInOneFolder() {
        #expect(excludes(["/build"], "/build", folder: true))
        #expect(!excludes(["/build"], "/src/build", folder: true))
        #expect(excludes(["docs/*.pdf"], "/docs/a.pdf"))
        #expect(!excludes(["/docs/*.pdf"], "/docs/old/a.pdf"))
    }

    @Test func aTrailingSlashMeansFoldersOnly() {
        #expect(excludes(["cache/"], "/x/cache", folder: true))
        #expect(!excludes(["cache/"], "/x/cache", folder: false))
    }
}
