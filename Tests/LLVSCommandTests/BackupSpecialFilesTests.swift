import Foundation
import LLVSSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// FIFOs and devices are backed up and restored as themselves, a file with several names comes back as one file with
/// those names, and a socket is reported as left out (never dropped silently).
extension BackupCommandTests {
    static func status(_ path: String) -> stat? {
        var info = stat()
        return lstat(path, &info) == 0 ? info : nil
    }

    /// A Unix socket's file, as a running server leaves it.
    static func makeSocket(_ path: String) throws {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        try #require(fd >= 0)
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            let bytes = Array(path.utf8)
            for (index, byte) in bytes.enumerated() where index < raw.count - 1 { raw[index] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        try #require(bound == 0)
    }

    @Test func fifosDevicesAndHardLinksComeBackAsThemselves() async throws {
        let source = path("source")
        try write(source + "/a/data.bin", Data(repeating: 3, count: 5000))
        try write(source + "/small.txt", Data("small".utf8))
        try FileManager.default.createDirectory(atPath: source + "/b", withIntermediateDirectories: true)
        #expect(link(source + "/a/data.bin", source + "/b/same.bin") == 0)
        #expect(link(source + "/a/data.bin", source + "/a/again.bin") == 0)
        #expect(link(source + "/small.txt", source + "/b/small-too.txt") == 0)
        #expect(mkfifo(source + "/pipe", 0o640) == 0)
        try Self.makeSocket(source + "/sock")

        #expect(try await llvs("init").status == 0)
        let backup = try await llvs("backup", source)
        #expect(backup.status == 0, "\(backup.error)")
        #expect(backup.error.contains("sock: a socket"), "a socket is reported, not dropped silently: \(backup.error)")

        let restored = try await llvs("restore", path("out"))
        #expect(restored.status == 0, "\(restored.error)")
        let out = path("out")
        let pipe = try #require(Self.status(out + "/pipe"))
        #expect(pipe.st_mode & S_IFMT == S_IFIFO && pipe.st_mode & 0o7777 == 0o640)
        #expect(pipe.st_mtim.tv_sec == Self.status(source + "/pipe")!.st_mtim.tv_sec)
        #expect(Self.status(out + "/sock") == nil)
        let first = try #require(Self.status(out + "/a/data.bin"))
        #expect(first.st_nlink == 3, "three names, one file")
        for name in ["/b/same.bin", "/a/again.bin"] {
            #expect(Self.status(out + name)?.st_ino == first.st_ino, "\(name)")
        }
        #expect(Self.status(out + "/b/small-too.txt")?.st_ino == Self.status(out + "/small.txt")?.st_ino)
        #expect(try Data(contentsOf: URL(fileURLWithPath: out + "/b/same.bin")) == Data(repeating: 3, count: 5000))

        // One name alone restores as a file of its own.
        let one = try await llvs("restore", path("one"), "b/same.bin")
        #expect(one.status == 0, "\(one.error)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: path("one/b/same.bin"))) == Data(repeating: 3, count: 5000))
        // An unchanged tree is an unchanged backup, hard links and all.
        #expect(try await llvs("backup", source).text.contains("Nothing changed"))
    }

    /// A device comes back as the same device (only root may make one, as `mknod` allows; CI runs as root).
    @Test(.enabled(if: geteuid() == 0 || CIEnvironment.requiresEveryTest, "only root can make a device to back up"))
    func aDeviceComesBackAsTheSameDevice() async throws {
        let source = path("devices")
        try FileManager.default.createDirectory(atPath: source, withIntermediateDirectories: true)
        let null = try #require(Self.status("/dev/null"))
        #expect(
            mknod(source + "/null", S_IFCHR | 0o666, null.st_rdev) == 0, "mknod: \(String(cString: strerror(errno)))")
        #expect(try await llvs("init").status == 0)
        #expect(try await llvs("backup", source).status == 0)
        let restored = try await llvs("restore", path("out"))
        #expect(restored.status == 0, "\(restored.error)")
        let device = try #require(Self.status(path("out") + "/null"))
        #expect(device.st_mode & S_IFMT == S_IFCHR && device.st_rdev == null.st_rdev)
    }
}
