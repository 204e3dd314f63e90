import Foundation
import LLVSSupport
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
        let watch = try Watch(folders, alsoOnWrites: alsoOnWrites)
        while !condition() && stillGoing() { try watch.next() }
    }

    /// A watch on folders, made before what it watches starts, so it misses none of its events; it counts them.
    final class Watch {
        private let fd: Int32
        private let folders: [String]
        private let mask: UInt32
        private var watched = Set<String>()
        private var buffer = [UInt8](repeating: 0, count: 64 << 10)
        /// The events read so far.
        private(set) var count = 0

        init(_ folders: [String], alsoOnWrites: Bool = false) throws {
            fd = inotify_init1(Int32(IN_CLOEXEC))
            guard fd >= 0 else {
                throw Unavailable(description: "inotify_init1 failed: \(String(cString: strerror(errno)))")
            }
            self.folders = folders
            mask = UInt32(IN_CREATE | IN_MOVED_TO | IN_CLOSE_WRITE | (alsoOnWrites ? IN_MODIFY : 0))
            try watchAll()
        }

        deinit { close(fd) }

        /// Waits for events (at most 100 ms), counts those read, and watches folders that appeared.
        func next() throws {
            var events = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            if poll(&events, 1, 100) > 0 {
                let length = read(fd, &buffer, buffer.count)
                // Each event is a 16-byte header (wd, mask, cookie, len) and `len` bytes of name.
                var offset = 0
                while offset + 16 <= length {
                    let nameLength = buffer.withUnsafeBytes {
                        $0.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self)
                    }
                    count += 1
                    offset += 16 + Int(nameLength)
                }
            }
            try watchAll()
        }

        /// Returns once `count` events were read, or `stillGoing()` no longer holds.
        func wait(forEvents wanted: Int, while stillGoing: () -> Bool) throws {
            while count < wanted && stillGoing() { try next() }
        }

        /// A folder removed between its listing and its watch has nothing left to tell; any other refusal (the
        /// kernel's limit on watches, a folder it may not read) would leave events unseen, so it throws.
        private func watch(_ path: String) throws {
            if !watched.contains(path) {
                if inotify_add_watch(fd, path, mask) >= 0 {
                    watched.insert(path)
                } else if errno != ENOENT {
                    throw Unavailable(description: "inotify_add_watch \(path): \(String(cString: strerror(errno)))")
                }
            }
        }

        private func watchAll() throws {
            for folder in folders {
                var existing = folder
                while !FileManager.default.fileExists(atPath: existing), existing != "/" {
                    existing = (existing as NSString).deletingLastPathComponent
                }
                try watch(existing)
                guard existing == folder else { continue }
                for name in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
                where FileManager.default.isDirectory(folder + "/" + name) {
                    try watch(folder + "/" + name)
                }
            }
        }
    }
}

extension ChildProcess {
    /// Waits for the process on a thread of its own (not one of the test's cooperative threads); its exit status.
    func ended() async -> Int32 {
        await withCheckedContinuation { continuation in
            Thread {
                self.waitUntilExit()
                continuation.resume(returning: self.terminationStatus)
            }.start()
        }
    }
}
