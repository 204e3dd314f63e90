import Foundation
import LLVSSupport
import LLVSHTTP

/// The RPC routes on items: metadata, folders, delete, move and copy; and the write every upload ends in.
extension MockDropboxServer {
    /// Names Dropbox will not store (its own and the desktop systems' files).
    static let disallowedNames: Set<String> = [
        "desktop.ini", "thumbs.db", ".ds_store", "icon\r", ".dropbox",
        ".dropbox.attr",
    ]

    func resolve(_ address: MockDropboxAddress, in state: MockDropboxState) -> MockDropboxItem? {
        switch address {
        case .components(let names): state.item(at: names)
        case .id(let id): state.live(id)
        }
    }

    func getMetadata(_ argument: [String: Any]) throws -> MockResponse {
        let address = try MockDropboxAddress(argument["path"], tag: "path")
        if case .components(let names) = address, names.isEmpty {
            throw MockDropboxError.text(
                400,
                "Error in call to API function \"files/get_metadata\": request body: path: The root folder is unsupported."
            )
        }
        return try state.withLock { state in
            guard let item = resolve(address, in: state) else { throw MockDropboxError.route(["path", "not_found"]) }
            return .json(200, state.metadata(item).json)
        }
    }

    /// Makes the folders of `names` that are missing (each a change); a file on the way is a conflict.
    func makeFolders(_ names: [String], tag: String, state: inout MockDropboxState) throws -> MockDropboxItem {
        guard var current = state.tree[MockDropboxState.rootID] else {
            throw MockDropboxError.text(500, "the mock lost its root folder")
        }
        for name in names {
            if let existing = state.tree.liveChild(named: name, of: current.id) {
                guard existing.isFolder else { throw MockDropboxError.route([tag, "conflict", "file_ancestor"]) }
                current = existing
                continue
            }
            try Self.checkName(name, tag: tag)
            let now = state.tree.tick()
            let folder = MockDropboxItem(
                id: state.newID(), name: name, parents: [current.id], isFolder: true, serverModified: now,
                clientModified: now)
            state.tree.insert(folder)
            state.note(folder.id)
            current = folder
        }
        return current
    }

    static func checkName(_ name: String, tag: String) throws {
        if disallowedNames.contains(name.lowercased()) { throw MockDropboxError.route([tag, "disallowed_name"]) }
        if name.hasSuffix(" ") || name.contains("\\") || name.contains("\0") {
            throw MockDropboxError.route([tag, "malformed_path"])
        }
    }

    func createFolder(_ argument: [String: Any]) throws -> MockResponse {
        guard case .components(let names) = try MockDropboxAddress(argument["path"], tag: "path"), !names.isEmpty
        else { throw MockDropboxError.route(["path", "malformed_path"]) }
        let autorename = argument["autorename"] as? Bool ?? false
        return try state.withLock { state in
            if let existing = state.item(at: names) {
                guard autorename else {
                    throw MockDropboxError.route(["path", "conflict", existing.isFolder ? "folder" : "file"])
                }
                let parent = try makeFolders(Array(names.dropLast()), tag: "path", state: &state)
                let name = Self.freeName(names[names.count - 1], in: parent.id, state: state)
                let folder = try makeFolders(Array(names.dropLast()) + [name], tag: "path", state: &state)
                return .json(200, ["metadata": state.metadata(folder).json])
            }
            let folder = try makeFolders(names, tag: "path", state: &state)
            return .json(200, ["metadata": state.metadata(folder).json])
        }
    }

    /// `name (1).ext`, `name (2).ext`, …: the first not taken in the folder.
    static func freeName(_ name: String, in folderID: String, state: MockDropboxState) -> String {
        let dot = name.lastIndex(of: ".").flatMap { $0 == name.startIndex ? nil : $0 }
        let stem = dot.map { String(name[..<$0]) } ?? name
        let suffix = dot.map { String(name[$0...]) } ?? ""
        var number = 1
        while state.tree.liveChild(named: "\(stem) (\(number))\(suffix)", of: folderID) != nil { number += 1 }
        return "\(stem) (\(number))\(suffix)"
    }

    /// `delete_v2`: a file, or a folder with everything in it (one deleted entry in the feed for all of it).
    func delete(_ argument: [String: Any]) throws -> MockResponse {
        let address = try MockDropboxAddress(argument["path"], tag: "path_lookup")
        return try state.withLock { state in
            guard let item = resolve(address, in: state), item.id != MockDropboxState.rootID else {
                throw MockDropboxError.route(["path_lookup", "not_found"])
            }
            if let parentRev = argument["parent_rev"] as? String, !item.isFolder, parentRev != item.rev {
                throw MockDropboxError.route(["path_write", "conflict", "file"])
            }
            let metadata = state.metadata(item)
            for removed in state.tree.remove(item.id) {
                if case .spooled(let url, _) = removed.content { try? FileManager.default.removeItem(at: url) }
            }
            state.noteDeleted(metadata)
            return .json(200, ["metadata": metadata.json])
        }
    }

    /// `move_v2` and `copy_v2`: `from_path` to `to_path`, whose parents are made; a name already there is a conflict
    /// (unless `autorename`); a folder cannot go into itself. Every item moved or copied shows in the feed.
    func relocate(_ argument: [String: Any], copying: Bool) throws -> MockResponse {
        let from = try MockDropboxAddress(argument["from_path"], tag: "from_lookup")
        guard case .components(let names) = try MockDropboxAddress(argument["to_path"], tag: "to"), !names.isEmpty
        else { throw MockDropboxError.route(["to", "malformed_path"]) }
        let autorename = argument["autorename"] as? Bool ?? false
        return try state.withLock { state in
            guard let item = resolve(from, in: state), item.id != MockDropboxState.rootID else {
                throw MockDropboxError.route(["from_lookup", "not_found"])
            }
            let parent = try makeFolders(Array(names.dropLast()), tag: "to", state: &state)
            if state.tree.isSameOrInside(parent.id, item.id) {
                throw MockDropboxError.route(["cant_move_folder_into_itself"])
            }
            var name = names[names.count - 1]
            try Self.checkName(name, tag: "to")
            if let existing = state.tree.liveChild(named: name, of: parent.id), existing.id != item.id {
                guard autorename else {
                    throw MockDropboxError.route(["to", "conflict", existing.isFolder ? "folder" : "file"])
                }
                name = Self.freeName(name, in: parent.id, state: state)
            } else if !copying, state.tree.liveChild(named: name, of: parent.id)?.id == item.id, name == item.name {
                throw MockDropboxError.route(["duplicated_or_nested_paths"])
            }
            if copying {
                let copy = copyTree(item.id, name: name, into: parent.id, state: &state)
                state.note(copy, withContents: true)
                return .json(200, ["metadata": state.tree[copy].map { state.metadata($0).json } ?? [:]])
            }
            let before = state.metadata(item)
            state.tree.update(item.id) {
                $0.name = name
                $0.parents = [parent.id]
            }
            state.noteDeleted(before)
            state.note(item.id, withContents: true)
            return .json(200, ["metadata": state.tree[item.id].map { state.metadata($0).json } ?? [:]])
        }
    }

    /// A copy of an item and everything in it, with new IDs (contents shared); the copy's ID.
    private func copyTree(_ id: String, name: String, into parentID: String, state: inout MockDropboxState) -> String {
        guard var copy = state.tree[id] else { return id }
        copy.id = state.newID()
        copy.name = name
        copy.parents = [parentID]
        if !copy.isFolder { copy.rev = state.newRev() }
        copy.serverModified = state.tree.tick()
        state.tree.insert(copy)
        for child in state.tree.children(of: id) where !child.trashed {
            _ = copyTree(child.id, name: child.name, into: copy.id, state: &state)
        }
        return copy.id
    }

    /// How a write meets what is there.
    enum WriteMode {
        case add, overwrite
        case update(String)

        init(_ value: Any?) throws {
            switch value {
            case nil: self = .add
            case let text as String where text == "add": self = .add
            case let text as String where text == "overwrite": self = .overwrite
            case let object as [String: Any]:
                switch object[".tag"] as? String {
                case "add": self = .add
                case "overwrite": self = .overwrite
                case "update":
                    guard let rev = object["update"] as? String else { fallthrough }
                    self = .update(rev)
                default:
                    throw MockDropboxError.text(400, "request body: mode: unknown tag \(object[".tag"] ?? "")")
                }
            default:
                throw MockDropboxError.text(400, "request body: mode: expected \"add\", \"overwrite\" or update")
            }
        }
    }

    /// Stores `content` as the file `commit` names (`CommitInfo`): parents made, the mode and conflicts as Dropbox
    /// applies them, the content hash checked when the client sent one. `wrap` turns a write error into the route's
    /// own error (an upload's `path` carries a `reason`).
    func write(
        _ content: MockContent, commit: [String: Any], contentHash sent: String?,
        wrap: ([String]) -> MockDropboxError, lag: Bool = false
    ) throws -> MockResponse {
        guard case .components(let names) = try MockDropboxAddress(commit["path"], tag: "path"), !names.isEmpty
        else { throw wrap(["malformed_path"]) }
        let mode = try WriteMode(commit["mode"])
        let autorename = commit["autorename"] as? Bool ?? false
        let clientModified = (commit["client_modified"] as? String).flatMap(MockDropboxTime.parse)
        let hash = content.checksums([.dropboxContentHash])[.dropboxContentHash] ?? ""
        if let sent, sent.lowercased() != hash { throw MockDropboxError.route(["content_hash_mismatch"]) }
        return try state.withLock { state in
            let parent: MockDropboxItem
            do {
                parent = try makeFolders(Array(names.dropLast()), tag: "path", state: &state)
            } catch let error as MockDropboxError where error.status == 409 {
                throw wrap(["conflict", "file_ancestor"])
            }
            var name = names[names.count - 1]
            do { try Self.checkName(name, tag: "path") } catch { throw wrap(["disallowed_name"]) }
            let existing = state.tree.liveChild(named: name, of: parent.id)
            let growth = content.size - (existing?.size ?? 0)
            guard state.tree.usage + growth <= settings.quotaBytes else { throw wrap(["insufficient_space"]) }
            var replace: MockDropboxItem?
            if let existing {
                if existing.isFolder {
                    guard autorename else { throw wrap(["conflict", "folder"]) }
                    name = Self.freeName(name, in: parent.id, state: state)
                } else {
                    switch mode {
                    case .overwrite:
                        replace = existing
                    case .add, .update:
                        var matches = false
                        if case .update(let rev) = mode { matches = rev == existing.rev }
                        if matches {
                            replace = existing
                        } else if existing.contentHash == hash {
                            return .json(200, state.metadata(existing).json)  // the same bytes: nothing to write
                        } else if autorename {
                            name = Self.freeName(name, in: parent.id, state: state)
                        } else {
                            throw wrap(["conflict", "file"])
                        }
                    }
                }
            }
            let now = state.tree.tick()
            let stored: MockDropboxItem
            if let replace {
                let rev = state.newRev()
                stored =
                    state.tree.update(replace.id) {
                        if case .spooled(let url, _) = $0.content { try? FileManager.default.removeItem(at: url) }
                        $0.content = content
                        $0.size = content.size
                        $0.contentHash = hash
                        $0.rev = rev
                        $0.serverModified = now
                        $0.clientModified = clientModified ?? now
                    } ?? replace
            } else {
                var file = MockDropboxItem(
                    id: state.newID(), name: name, parents: [parent.id], isFolder: false, serverModified: now,
                    clientModified: clientModified ?? now)
                file.rev = state.newRev()
                file.content = content
                file.size = content.size
                file.contentHash = hash
                state.tree.insert(file)
                if lag { state.tree.lagInListings(file.id) }
                stored = file
            }
            state.note(stored.id)
            return .json(200, state.metadata(stored).json)
        }
    }
}
