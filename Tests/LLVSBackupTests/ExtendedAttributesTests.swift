import CLinux
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

@testable import LLVSBackup

/// Attributes are read the same through `listxattrat` and through the /proc path older kernels need.
@Suite(.serialized) struct ExtendedAttributesTests {
    @Test(arguments: [true, false]) func attributesAreReadThroughEitherCall(listAt: Bool) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("xattr-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        FileManager.default.createFile(atPath: folder.path + "/with", contents: Data("a".utf8))
        FileManager.default.createFile(atPath: folder.path + "/without", contents: Data("b".utf8))
        let value = Data((0..<300).map { UInt8(truncatingIfNeeded: $0) })
        #expect(value.withUnsafeBytes { setxattr(folder.path + "/with", "user.big", $0.baseAddress, $0.count, 0) } == 0)
        #expect(setxattr(folder.path + "/with", "user.a", "1", 1, 0) == 0)

        let saved = ExtendedAttributes.hasListAt.load(ordering: .relaxed)
        ExtendedAttributes.hasListAt.store(listAt, ordering: .relaxed)
        defer { ExtendedAttributes.hasListAt.store(saved, ordering: .relaxed) }
        let directory = try OpenDirectory.open(LocalPath(folder.path))
        defer { directory.close() }
        let read = try ExtendedAttributes.read(Array("with".utf8), in: directory.fd).get()
        #expect(
            read == [
                ExtendedAttribute(name: Array("user.a".utf8), value: Data("1".utf8)),
                ExtendedAttribute(name: Array("user.big".utf8), value: value),
            ])
        #expect(try ExtendedAttributes.read(Array("without".utf8), in: directory.fd).get().isEmpty)
        #expect(try ExtendedAttributes.read(Array("gone".utf8), in: directory.fd).get().isEmpty)
    }
}
