import Foundation
import Testing
@testable import LLVS
#if canImport(Glibc)
import Glibc
#endif

/// A file the store writes for an upload is made under its own name and no other: what a killed process leaves in
/// the store's `tmp/` is then always named after that process, so the next run removes it. (Foundation's
/// `createFile` writes through a hidden `.dat.nosync…` temporary, which a kill left behind under no process's name.)
@Suite struct StagedFileNamingTests {
    /// The names created in `folder` while `body` runs, as the kernel reports them (inotify).
    static func namesCreated(in folder: URL, during body: () throws -> Void) throws -> [String] {
        let fd = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
        try #require(fd >= 0)
        defer { close(fd) }
        try #require(inotify_add_watch(fd, folder.path, UInt32(IN_CREATE | IN_MOVED_TO)) >= 0)
        try body()
        var names: [String] = []
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        var offset = 0
        while count > 0, offset < count {
            let length = buffer.withUnsafeBytes { Int($0.load(fromByteOffset: offset + 12, as: UInt32.self)) }
            let nameBytes = buffer[(offset + 16)..<(offset + 16 + length)].prefix { $0 != 0 }
            names.append(String(decoding: nameBytes, as: UTF8.self))
            offset += 16 + length
        }
        return names
    }

    @Test func aStagedFileIsCreatedUnderItsOwnNameOnly() throws {
        let folder = TemporaryDirectory()
        let url = folder.child("1234@abcd-staged")
        let names = try Self.namesCreated(in: folder.url) {
            let writer = try PlainStagedFileWriter(url: url)
            try writer.write(Data("changes".utf8))
            try writer.finish()
        }
        #expect(names == ["1234@abcd-staged"], "created: \(names)")
        #expect(try Data(contentsOf: url) == Data("changes".utf8))
    }
}
