import CLinux
import Foundation
import LLVSSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Extended attributes and POSIX ACLs (which Linux keeps as the attributes `system.posix_acl_*`) are backed up and
/// restored with the files, folders keep their default ACL, and a change to an attribute alone is a change.
extension BackupCommandTests {
    func setAttribute(_ path: String, _ name: String, _ value: Data) throws {
        let done = value.withUnsafeBytes { lsetxattr(path, name, $0.baseAddress, $0.count, 0) }
        guard done == 0 else { throw CocoaError(.fileWriteUnknown, userInfo: ["errno": errno, "path": path]) }
    }

    /// Every attribute of `path`, by name.
    func attributes(_ path: String) -> [String: Data] {
        var names = [CChar](repeating: 0, count: 65536)
        let size = llistxattr(path, &names, names.count)
        guard size > 0 else { return [:] }
        var result: [String: Data] = [:]
        for name in names[0..<size].split(separator: 0) {
            let text = String(decoding: name.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            var value = [UInt8](repeating: 0, count: 65536)
            let length = lgetxattr(path, text, &value, value.count)
            if length >= 0 { result[text] = Data(value.prefix(length)) }
        }
        return result
    }

    /// An access ACL giving user 12345 read and write: version 2, then (tag, permissions, id) entries in tag order.
    static let namedUserACL: Data = {
        var bytes: [UInt8] = [2, 0, 0, 0]
        for (tag, permissions, id): (UInt16, UInt16, UInt32) in [
            (0x01, 6, .max), (0x02, 6, 12345), (0x04, 4, .max), (0x10, 6, .max), (0x20, 4, .max),
        ] {
            bytes += withUnsafeBytes(of: tag.littleEndian, Array.init)
            bytes += withUnsafeBytes(of: permissions.littleEndian, Array.init)
            bytes += withUnsafeBytes(of: id.littleEndian, Array.init)
        }
        return Data(bytes)
    }()

    /// Root gives files back their owners (a restore by anyone else makes them the restorer's).
    @Test(.enabled(if: geteuid() == 0 || CIEnvironment.requiresEveryTest, "only root gives a file to another user"))
    func ownersAreKeptAndRestoredByRoot() async throws {
        try write(path("src/theirs/file.txt"), Data("theirs".utf8))
        try FileManager.default.createSymbolicLink(atPath: path("src/theirs/link"), withDestinationPath: "file.txt")
        for (name, user, group) in [("theirs", 1234, 5678), ("theirs/file.txt", 4321, 8765), ("theirs/link", 77, 88)] {
            #expect(lchown(path("src/" + name), uid_t(user), gid_t(group)) == 0)
        }
        chmod(path("src/theirs/file.txt"), 0o4750)
        #expect(try await llvs("init").status == 0)
        #expect(try await llvs("backup", path("src")).status == 0)
        #expect(try await llvs("restore", path("out"), "--keep-special-bits").status == 0)
        for name in ["theirs", "theirs/file.txt", "theirs/link"] {
            var before = stat(), after = stat()
            lstat(path("src/" + name), &before)
            lstat(path("out/" + name), &after)
            #expect(after.st_uid == before.st_uid && after.st_gid == before.st_gid, "\(name)")
            #expect(after.st_mode == before.st_mode, "\(name): the setuid bit survives the change of owner")
        }
    }

    @Test func extendedAttributesAndACLsAreKeptAndRestored() async throws {
        try write(path("src/notes.txt"), Data("notes".utf8))
        try write(path("src/shared/report.txt"), Data("report".utf8))
        try setAttribute(path("src/notes.txt"), "user.color", Data("blue".utf8))
        try setAttribute(path("src/notes.txt"), "user.binary", Data([0, 1, 2, 255]))
        try setAttribute(path("src/shared/report.txt"), "system.posix_acl_access", Self.namedUserACL)
        try setAttribute(path("src/shared"), "system.posix_acl_default", Self.namedUserACL)
        try setAttribute(path("src/shared"), "user.folder", Data("yes".utf8))
        let watched = ["notes.txt", "shared/report.txt", "shared"]
        let before = Dictionary(uniqueKeysWithValues: watched.map { ($0, attributes(path("src/" + $0))) })
        #expect(before["shared/report.txt"]?["system.posix_acl_access"] == Self.namedUserACL)

        #expect(try await llvs("init").status == 0)
        let backup = try await llvs("backup", path("src"))
        #expect(backup.status == 0, "\(backup.error)")
        let oldest = try #require(backup.text.firstMatch(of: /as version ([0-9A-F-]+):/)?.1)
        let restored = try await llvs("restore", path("out"))
        #expect(restored.status == 0, "\(restored.error)")
        #expect(!restored.error.contains("not restored"), "\(restored.error)")
        for name in watched { #expect(attributes(path("out/" + name)) == before[name], "\(name)") }
        #expect(try snapshot(of: path("out")) == snapshot(of: path("src")))

        // An attribute changed alone (the file's time stays) is backed up as a change.
        try setAttribute(path("src/notes.txt"), "user.color", Data("red".utf8))
        let again = try await llvs("backup", path("src"))
        #expect(again.status == 0 && !again.text.contains("Nothing changed"), "\(again.text)")
        #expect(try await llvs("restore", path("out-2")).status == 0)
        #expect(attributes(path("out-2/notes.txt"))["user.color"] == Data("red".utf8))
        // The first backup still has the first value.
        #expect(try await llvs("restore", path("out-1"), "--at", String(oldest)).status == 0)
        #expect(attributes(path("out-1/notes.txt"))["user.color"] == Data("blue".utf8))
    }
}
