import Foundation
import LLVSSupport

/// pCloud's renames, moves and copies (`renamefile`, `renamefolder`, `copyfile`) and the times a client gives
/// (`mtime`, `ctime` in unix seconds): what clients that upload under a temporary name and rename it, or keep a
/// file's own modification time, depend on.
extension MockPCloudServer {
    /// Where a rename or copy goes: `tofolderid` (or the item's own folder) and `toname` (or its own name), or
    /// `topath`, a full path, or a folder when it ends in `/` (the name kept).
    func destination(
        _ call: MockPCloudCall, of item: MockPCloudItem, _ state: MockPCloudState
    ) throws -> (MockPCloudItem, String) {
        if let path = call.parameters["topath"] {
            guard path.hasPrefix("/") else { throw MockPCloudError.invalidPath }
            let parts = path.split(separator: "/").map(String.init)
            if path.hasSuffix("/") {
                guard let folder = try resolveFolder(parts, state) else { throw MockPCloudError.folderMissing }
                return (folder, item.name)
            }
            guard let name = parts.last, MockPCloudNames.isValid(name) else { throw MockPCloudError.invalidName }
            guard let folder = try resolveFolder(Array(parts.dropLast()), state) else {
                throw MockPCloudError.parentMissing
            }
            return (folder, name)
        }
        let folder: MockPCloudItem
        if let number = try call.number("tofolderid") {
            guard let found = state.live("d\(number)"), found.isFolder else { throw MockPCloudError.folderMissing }
            folder = found
        } else {
            guard let parentID = item.parents.first, let parent = state.live(parentID) else {
                throw MockPCloudError.folderMissing
            }
            folder = parent
        }
        let name = call.parameters["toname"] ?? item.name
        guard MockPCloudNames.isValid(name) else { throw MockPCloudError.invalidName }
        return (folder, name)
    }

    private func resolveFolder(_ names: [String], _ state: MockPCloudState) throws -> MockPCloudItem? {
        try resolve("/" + names.joined(separator: "/"), state).flatMap { $0.isFolder ? $0 : nil }
    }

    /// The times a call gives: `mtime`, and `ctime` (which pCloud takes only with `mtime`).
    static func clientTimes(_ call: MockPCloudCall) throws -> (modified: Date, created: Date?)? {
        guard let mtime = try call.number("mtime") else { return nil }
        let created = try call.number("ctime").map { Date(timeIntervalSince1970: TimeInterval($0)) }
        return (Date(timeIntervalSince1970: TimeInterval(mtime)), created)
    }

    /// `renamefile`: moves and renames a file; a file already at the destination is replaced (it goes to the trash).
    func renameFile(_ call: MockPCloudCall) throws -> MockResponse {
        try state.withLock { state in
            let found = try file(call, state)
            let (folder, name) = try destination(call, of: found, state)
            if let existing = state.child(named: name, of: folder.id), existing.id != found.id {
                guard !existing.isFolder else { throw MockPCloudError.exists }
                state.tree.update(existing.id) { $0.trashed = true }
                state.log("deletefile", existing.id)
            }
            let moved =
                state.tree.update(found.id) { item in
                    item.name = name
                    item.parents = [folder.id]
                } ?? found
            state.log("modifyfile", moved.id)
            return Self.ok(["metadata": metadata(moved, call, in: state)])
        }
    }

    /// `renamefolder`: moves and renames a folder; never into itself or below itself, never onto a name in use.
    func renameFolder(_ call: MockPCloudCall) throws -> MockResponse {
        try state.withLock { state in
            let found = try folder(call, state)
            guard found.id != MockPCloudState.rootID else {
                throw MockPCloudError(2003, "Access denied. You do not have permissions to perform this operation.")
            }
            let (target, name) = try destination(call, of: found, state)
            // The reference names no code for this refusal; the one here is the mock's (a final 2xxx, as pCloud's are).
            if state.tree.isSameOrInside(target.id, found.id) {
                throw MockPCloudError(2043, "Cannot move a folder to a subfolder of itself.")
            }
            if let existing = state.child(named: name, of: target.id), existing.id != found.id {
                throw MockPCloudError.exists
            }
            let moved =
                state.tree.update(found.id) { item in
                    item.name = name
                    item.parents = [target.id]
                } ?? found
            state.log("modifyfolder", moved.id)
            return Self.ok(["metadata": metadata(moved, call, in: state)])
        }
    }

    /// `copyfile`: a copy with the same contents under a new name or folder (with `mtime`/`ctime` when given); onto
    /// a file already there unless `noover=1` (2004).
    func copyFile(_ call: MockPCloudCall) throws -> MockResponse {
        let times = try Self.clientTimes(call)
        return try state.withLock { state in
            let found = try file(call, state)
            let (folder, name) = try destination(call, of: found, state)
            if call.flag("noover"), state.child(named: name, of: folder.id) != nil { throw MockPCloudError.exists }
            var copy = try store(found.content ?? .data(Data()), named: name, in: folder, state: &state)
            if let times { copy = state.tree.update(copy.id) { Self.apply(times, to: &$0) } ?? copy }
            return Self.ok(["metadata": metadata(copy, call, in: state)])
        }
    }

    static func apply(_ times: (modified: Date, created: Date?), to item: inout MockPCloudItem) {
        item.modified = times.modified
        if let created = times.created { item.created = created }
    }
}

/// pCloud's trash: `trash_list` (what was deleted itself, or inside a deleted folder), `trash_restorepath` (where a
/// restore would put it), `trash_restore` (back to its folder, or `restoreto`) and `trash_clear` (gone for good;
/// `folderid=0` empties the trash).
extension MockPCloudServer {
    /// A deleted item a call names by `fileid` or `folderid` (0 is the trash itself).
    private func trashed(_ call: MockPCloudCall, _ state: MockPCloudState) throws -> MockPCloudItem? {
        if let number = try call.number("fileid") {
            guard let item = state.tree["f\(number)"], item.trashed else { throw MockPCloudError.fileMissing }
            return item
        }
        guard let number = try call.number("folderid") else { throw MockPCloudError.noFolder }
        if number == 0 { return nil }
        guard let item = state.tree["d\(number)"], item.trashed else { throw MockPCloudError.folderMissing }
        return item
    }

    func trashList(_ call: MockPCloudCall) throws -> MockResponse {
        try state.withLock { state in
            let folder = try call.number("folderid") == nil ? nil : try trashed(call, state)
            let contents =
                folder.map { state.tree.children(of: $0.id) }
                ?? state.tree.items.values.filter(\.trashed).sorted { $0.id < $1.id }
            let listing: [String: Any] = [
                "name": folder?.name ?? "Trash", "isfolder": true, "folderid": folder?.number ?? 0,
                "id": folder?.id ?? "d0", "contents": contents.map { metadata($0, call, in: state) },
            ]
            return Self.ok(["metadata": listing])
        }
    }

    /// The folder a restored item goes to: `restoreto`, else its own folder while that is there, else the root.
    private func restoreDestination(
        _ item: MockPCloudItem, _ call: MockPCloudCall, _ state: MockPCloudState
    ) throws -> MockPCloudItem {
        if let number = try call.number("restoreto") {
            guard let folder = state.live("d\(number)"), folder.isFolder else { throw MockPCloudError.folderMissing }
            return folder
        }
        return item.parents.first.flatMap { state.live($0) } ?? state.tree[MockPCloudState.rootID] ?? item
    }

    func trashRestorePath(_ call: MockPCloudCall) throws -> MockResponse {
        try state.withLock { state in
            guard let item = try trashed(call, state) else { throw MockPCloudError.noFile }
            return Self.ok(["destination": metadata(try restoreDestination(item, call, state), call, in: state)])
        }
    }

    func trashRestore(_ call: MockPCloudCall) throws -> MockResponse {
        try state.withLock { state in
            guard let item = try trashed(call, state) else { throw MockPCloudError.noFile }
            let destination = try restoreDestination(item, call, state)
            if state.child(named: item.name, of: destination.id) != nil { throw MockPCloudError.exists }
            let restored =
                state.tree.update(item.id) { changed in
                    changed.trashed = false
                    changed.parents = [destination.id]
                } ?? item
            state.log(item.isFolder ? "createfolder" : "createfile", restored.id)
            return Self.ok(["metadata": metadata(restored, call, in: state)])
        }
    }

    func trashClear(_ call: MockPCloudCall) throws -> MockResponse {
        try state.withLock { state in
            let targets = try trashed(call, state).map { [$0] } ?? state.tree.items.values.filter(\.trashed)
            for item in targets { _ = state.tree.remove(item.id) }
            return Self.ok([:])
        }
    }
}
