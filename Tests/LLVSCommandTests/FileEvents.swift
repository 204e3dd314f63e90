import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Waits for something to happen in folders by the kernel's word (inotify), not by sleeping: a test that must act
/// while another process is at a given point (kill it after a checkpoint) is woken by each file that process makes.
enum FileEvents {
    struct Unavailable: Error, CustomStringConvertible { var description: String }

    /// Blocks until `condition()` holds or `stillGoing()` no longer does. Woken by every creation, rename into or
    /// finished write in `folders` and their sub-folders (watched as they appear; a folder that does not exist yet
    /// is watched through its nearest parent that does). The wait on the events also wakes every 100 ms, only so a
    /// process that ends without making a file is noticed.
    /// With `alsoOnWrites`, every write into a file there wakes it too (a file that grows while it stays open).
    /// Throws when the kernel gives no inotify instance: the caller cannot wait, and must not go on as if it had.
    static func wait(
        in folders: [String], until condition: () -> Bool, while stillGoing: () -> Bool, alsoOnWrites: Bool = false
    ) throws {
        let fd = inotify_init1(Int32(IN_CLOEXEC))
        guard fd >= 0 else {
            throw Unavailable(description: "inotify_init1 failed: \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        var watched = Set<String>()
        func watch(_ path: String) {
            guard !watched.contains(path),
                inotify_add_watch(
                    fd, path, UInt32(IN_CREATE | IN_MOVED_TO | IN_CLOSE_WRITE | (alsoOnWrites ? IN_MODIFY : 0))) >= 0
            else { return }
            watched.insert(path)
        }
        func watchAll() {
            for folder in folders {
                var existing = folder
                while !FileManager.default.fileExists(atPath: existing), existing != "/" {
                    existing = (existing as NSString).deletingLastPathComponent
                }
                watch(existing)
                guard existing == folder else { continue }
                for name in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
                where FileManager.default.isDirectory(folder + "/" + name) {
                    watch(folder + "/" + name)
                }
            }
        }
        watchAll()
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while !condition() && stillGoing() {
            var events = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            if poll(&events, 1, 100) > 0 { _ = read(fd, &buffer, buffer.count) }
            watchAll()
        }
    }
}
