import Foundation

/// The remote a store last synced with, kept in the store (`STORE/last-remote`), so `llvs sync` without a name does
/// the expected thing when several remotes are configured, and `llvs status` can say which one it is.
struct RememberedRemote {
    let file: URL

    init(store: URL) { file = store.appendingPathComponent("last-remote") }

    /// The remembered name; nil when none is, or the file is unreadable (then a name must be given, as before).
    var name: String? {
        guard let data = try? Data(contentsOf: file) else { return nil }
        let name = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return name.isEmpty || name.count > 200 ? nil : name
    }

    /// Remembers a remote after a sync with it; a failure to write only loses the convenience, never the sync.
    func remember(_ name: String) {
        guard name != self.name else { return }
        try? Data((name + "\n").utf8).write(to: file, options: .atomic)
    }
}
