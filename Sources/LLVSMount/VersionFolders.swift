import Foundation
import LLVS
import Synchronization

/// The folders a version's value IDs make (`a/b/c` is `c` in the folder `a/b`), built once per version from one walk
/// of its IDs and kept for the few versions looked at last: `versions/<version>/…` is listed and resolved from it.
/// An ID with an empty, `.` or `..` part names no path and is left out.
final class VersionFolders: Sendable {
    struct Folders: Sendable {
        /// Folder path (`""` for the version's own) → the names in it.
        var children: [String: Set<String>] = ["": []]
    }

    let store: Store
    private let cache = Mutex<[(version: Version.ID, folders: Folders)]>([])
    static let kept = 4

    init(store: Store) { self.store = store }

    func folders(of version: Version.ID) throws -> Folders {
        if let found = cache.withLock({ $0.first { $0.version == version }?.folders }) { return found }
        var folders = Folders()
        try store.forEachValueId(at: version) { id in
            let parts = id.rawValue.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
            guard !parts.contains(where: { $0.isEmpty || $0 == "." || $0 == ".." }) else { return }
            var prefix = ""
            for (index, part) in parts.enumerated() {
                folders.children[prefix, default: []].insert(part)
                if index < parts.count - 1 {
                    prefix = prefix.isEmpty ? part : prefix + "/" + part
                    if folders.children[prefix] == nil { folders.children[prefix] = [] }
                }
            }
        }
        cache.withLock { cache in
            cache.insert((version, folders), at: 0)
            if cache.count > Self.kept { cache.removeLast() }
        }
        return folders
    }
}
