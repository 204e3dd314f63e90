import Foundation
import LLVSSupport
#if canImport(Glibc)
import Glibc
#endif

extension Store {
    /// Where the store's operations keep temporary files (changes downloaded or encoded for an exchange, snapshot
    /// archives): inside the store, so they are on its disk and a process killed mid-way leaves them where the next
    /// run finds them. Names start with the process ID; opening the store removes those of processes that are gone.
    /// (Named a folder outright: left to infer it, Foundation asks the file system, once per received version.)
    public var temporaryDirectory: URL { rootURL.appendingPathComponent(Self.temporaryFolderName, isDirectory: true) }

    static let temporaryFolderName = "tmp"

    /// A fresh path in `temporaryDirectory`, named so a later run can tell whether its process is still alive.
    public func temporaryFile(_ label: String) -> URL {
        try? POSIX.makeDirectories(temporaryDirectory.path)
        return temporaryDirectory.appendingPathComponent(
            "\(TemporaryWriter.tag)-\(UUID.drawn().uuidString)-\(label)", isDirectory: false)
    }

    /// Removes what processes that ended (killed, crashed) left in `temporaryDirectory`; a live process's files
    /// (another `llvs` sharing the store) are left alone.
    func removeAbandonedTemporaries() {
        let folder = temporaryDirectory.path
        try? POSIX.makeDirectories(folder)
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return }
        for name in names {
            // Files made by `temporaryFile` start with the process ID; an `AtomicFileWriter` writing one of them
            // (a snapshot archive, a downloaded changes file) puts its own `.tmp-<pid>-` before that.
            let unprefixed =
                name.hasPrefix(AtomicFileWriter.temporaryPrefix)
                ? name.dropFirst(AtomicFileWriter.temporaryPrefix.count) : Substring(name)
            guard let writer = TemporaryWriter(unprefixed) else { continue }
            if writer.isGone { try? FileManager.default.removeItem(atPath: folder + "/" + name) }
        }
    }
}
