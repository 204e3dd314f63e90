import Foundation
import LLVSSupport

/// The local files the checks upload from, in `$TMPDIR`. A run stopped where no cleanup runs (`LLVS_DEADLINE`
/// ends the process, as does a kill) leaves its file there, so each is named after its process, as the store's
/// temporaries are, and every run first removes those whose process has ended.
enum ConformanceLocalFiles {
    static let prefix = "llvs-conformance-"

    /// A fresh path for one check's local file.
    static func make() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent(
            "\(prefix)\(TemporaryWriter.tag)-\(UUID().uuidString)")
    }

    /// Removes the files of runs that ended without removing them; a live run's files are left alone.
    static func removeAbandoned() {
        let folder = FileManager.default.temporaryDirectory.path
        guard let names = try? POSIX.listNames(folder) else { return }
        for name in names where name.hasPrefix(prefix) {
            guard let writer = TemporaryWriter(name.dropFirst(prefix.count)), writer.isGoneFromThisMachine else {
                continue
            }
            POSIX.remove(folder + "/" + name)
        }
    }
}
