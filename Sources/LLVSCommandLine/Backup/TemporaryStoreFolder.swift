import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The folder, under the system's temporary folder ($TMPDIR), of a store that lives as long as one command
/// (`restore --from`, `mount --from`): `llvs-<purpose>-<pid>-<uuid>`. The command removes it when it ends; one left by
/// a killed command is known by its process being gone, and the next command of the same purpose removes it.
enum TemporaryStoreFolder {
    static func make(_ purpose: String) -> URL {
        let base = FileManager.default.temporaryDirectory
        removeAbandoned(purpose, in: base)
        return base.appendingPathComponent("llvs-\(purpose)-\(getpid())-\(UUID().uuidString)")
    }

    /// Removes the folders of `purpose` whose process has ended. A process of another user (EPERM) or a number in use
    /// again keeps its folder: only a certainly ended one is removed.
    static func removeAbandoned(_ purpose: String, in base: URL) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: base.path) else { return }
        let prefix = "llvs-\(purpose)-"
        for name in names where name.hasPrefix(prefix) {
            let rest = name.dropFirst(prefix.count)
            guard let dash = rest.firstIndex(of: "-"), let pid = pid_t(rest[..<dash]), pid > 0,
                UUID(uuidString: String(rest[rest.index(after: dash)...])) != nil
            else { continue }
            if kill(pid, 0) == -1, errno == ESRCH {
                try? FileManager.default.removeItem(at: base.appendingPathComponent(name))
            }
        }
    }
}
