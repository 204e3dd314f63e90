import Foundation
import LLVSHTTP

/// COPY and MOVE (RFC 4918 9.8, 9.9) of a file, or of a folder with everything in it, to `Destination` (an absolute
/// URL or a path on this server): 201 when nothing was there, 204 when `Overwrite: T` (the default) replaced it,
/// 412 with `Overwrite: F` over something, 409 when the destination's parent is missing, 403 onto itself or below
/// itself, 502 for another host. A COPY of a folder with `Depth: 0` copies the folder alone; MOVE takes only
/// `Depth: infinity`.
extension MockWebDAVServer {
    func transfer(_ path: String, request: IncomingRequest, keepingSource: Bool) -> MockResponse {
        guard let destinationHeader = request.headers["Destination"] else { return .empty(400) }
        var destinationPath = destinationHeader
        if let url = URL(string: destinationHeader), url.host != nil {
            guard url.port.map(UInt16.init) == server.port || url.port == nil else { return .empty(502) }
            destinationPath = url.path(percentEncoded: true)
        }
        guard let target = relativePath(destinationPath), !target.isEmpty, !path.isEmpty,
            !target.split(separator: "/").contains("..")
        else { return .empty(403) }
        let overwrite = request.headers["Overwrite"]?.uppercased() != "F"
        let depth = request.headers["Depth"]?.lowercased() ?? "infinity"
        guard depth == "infinity" || (keepingSource && depth == "0") else { return .empty(400) }
        if let refusal = writeRefusal(
            request, paths: keepingSource ? [target] : [path, target], subtree: keepingSource ? nil : path)
        {
            return refusal
        }
        return tree.withLock { tree in
            guard let source = tree[path] else { return .empty(404) }
            guard case .folder? = tree[parent(target)] else { return .empty(409) }
            guard target != path, !target.hasPrefix(path + "/") else { return .empty(403) }
            let replaced = tree[target] != nil
            if replaced {
                guard overwrite else { return .empty(412) }
                for key in Array(tree.keys) where key == target || key.hasPrefix(target + "/") { tree[key] = nil }
            }
            if keepingSource {
                if case .folder = source, depth == "0" {
                    tree[target] = .folder(modified: Date())
                } else {
                    for key in Array(tree.keys) where key == path || key.hasPrefix(path + "/") {
                        tree[target + key.dropFirst(path.count)] = copied(tree[key]!)
                    }
                }
            } else {
                for key in Array(tree.keys) where key == path || key.hasPrefix(path + "/") {
                    tree[target + key.dropFirst(path.count)] = tree.removeValue(forKey: key)
                }
            }
            transferProperties(from: path, to: target, keepingSource: keepingSource)
            if !keepingSource { removeLocks(under: path) }  // a moved resource leaves its locks behind (RFC 4918 9.9.4)
            return .empty(replaced ? 204 : 201)
        }
    }

    /// A node as a copy holds it: the same bytes under a file of its own (so removing one never removes the other).
    private func copied(_ node: Node) -> Node {
        guard case .file(let content, _, _) = node else { return .folder(modified: Date()) }
        switch content {
        case .data(let data):
            return .file(.data(data), modified: Date(), version: 1)
        case .spooled(let url, let size):
            let kept = storage.appendingPathComponent(UUID().uuidString)
            guard (try? FileManager.default.copyItem(at: url, to: kept)) != nil else { return node }
            return .file(.spooled(kept, size: size), modified: Date(), version: 1)
        }
    }
}
