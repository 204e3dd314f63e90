import Foundation
import LLVSSupport
import LLVSHTTP

/// `list_folder` and its cursors. A cursor names a folder (`path_lower`), whether it is recursive, a position in the
/// account's journal of changes, and, while a listing is still being paged, how far it has got. `continue` pages the
/// listing, then gives the journal's entries since the position for that folder; a position the mock let go is
/// `reset`, a folder that is gone `path/not_found`. The long poll waits on the journal.
extension MockDropboxServer {
    struct Cursor {
        var generation: String
        var folder: String
        var recursive: Bool
        var includeDeleted: Bool
        var position: Int
        var offset: Int?
        var limit: Int

        var text: String {
            var object: [String: Any] = [
                "g": generation, "p": folder, "r": recursive, "d": includeDeleted, "i": position, "l": limit,
            ]
            if let offset { object["o"] = offset }
            let data = MockJSON.data(object, sortedKeys: true) ?? Data()
            return "AAG"
                + data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(
                    of: "/", with: "_"
                ).replacingOccurrences(of: "=", with: "")
        }

        init(
            generation: String, folder: String, recursive: Bool, includeDeleted: Bool, position: Int, offset: Int?,
            limit: Int
        ) {
            self.generation = generation
            self.folder = folder
            self.recursive = recursive
            self.includeDeleted = includeDeleted
            self.position = position
            self.offset = offset
            self.limit = limit
        }

        init(_ value: Any?) throws {
            var text = (value as? String).map { String($0.dropFirst(3)) } ?? ""
            text = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
            text += String(repeating: "=", count: (4 - text.count % 4) % 4)
            guard (value as? String)?.hasPrefix("AAG") == true, let data = Data(base64Encoded: text),
                let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
                let folder = object["p"] as? String, let position = (object["i"] as? NSNumber)?.intValue,
                let limit = (object["l"] as? NSNumber)?.intValue
            else {
                throw MockDropboxError.text(
                    400, "Error in call to API function \"files/list_folder/continue\": Invalid \"cursor\" parameter")
            }
            self.init(
                generation: object["g"] as? String ?? "", folder: folder, recursive: object["r"] as? Bool ?? false,
                includeDeleted: object["d"] as? Bool ?? false,
                position: position, offset: (object["o"] as? NSNumber)?.intValue, limit: limit)
        }

        /// Whether a journal entry at `lower` is inside the cursor's folder (directly, unless recursive).
        func covers(_ lower: String) -> Bool {
            recursive ? lower.hasPrefix(folder + "/") : lower.lastIndex(of: "/").map { String(lower[..<$0]) } == folder
        }
    }

    /// The folder a listing argument names, its `path_lower`; a file is `not_folder`.
    private func folder(_ argument: [String: Any], in state: MockDropboxState) throws -> (MockDropboxItem, String) {
        let address = try MockDropboxAddress(argument["path"], tag: "path")
        guard let item = resolve(address, in: state) else { throw MockDropboxError.route(["path", "not_found"]) }
        guard item.isFolder else { throw MockDropboxError.route(["path", "not_folder"]) }
        return (item, state.metadata(item).pathLower)
    }

    private func limit(_ argument: [String: Any]) throws -> Int {
        guard let value = argument["limit"] else { return 2000 }
        guard let limit = (value as? NSNumber)?.intValue, (1...2000).contains(limit) else {
            throw MockDropboxError.text(400, "request body: limit: value must be between 1 and 2000")
        }
        return limit
    }

    /// A cursor at the journal's end for the folder a listing argument names; `listing` starts it at the listing's
    /// first page.
    private func newCursor(_ argument: [String: Any], listing: Bool, in state: MockDropboxState) throws -> Cursor {
        let limit = try limit(argument)
        let (_, lower) = try folder(argument, in: state)
        return Cursor(
            generation: state.generation, folder: lower, recursive: argument["recursive"] as? Bool ?? false,
            includeDeleted: argument["include_deleted"] as? Bool ?? false,
            position: state.journalBase + state.journal.count, offset: listing ? 0 : nil, limit: limit)
    }

    func listFolder(_ argument: [String: Any]) throws -> MockResponse {
        try state.withLock { state in try page(try newCursor(argument, listing: true, in: state), state: &state) }
    }

    func latestCursor(_ argument: [String: Any]) throws -> MockResponse {
        try state.withLock { state in
            .json(200, ["cursor": try newCursor(argument, listing: false, in: state).text])
        }
    }

    func continueListing(_ argument: [String: Any]) throws -> MockResponse {
        let cursor = try Cursor(argument["cursor"])
        return try state.withLock { state in try page(cursor, state: &state) }
    }

    /// The next page for a cursor: the rest of its listing, or the journal since its position.
    private func page(_ cursor: Cursor, state: inout MockDropboxState) throws -> MockResponse {
        let index = cursor.position - state.journalBase
        guard cursor.generation == state.generation, (0...state.journal.count).contains(index) else {
            throw MockDropboxError.route(["reset"])
        }
        let folderItem =
            cursor.folder.isEmpty ? state.tree[MockDropboxState.rootID] : state.item(at: Self.names(cursor.folder))
        guard let folderItem, folderItem.isFolder else { throw MockDropboxError.route(["path", "not_found"]) }
        var next = cursor
        var entries: [[String: Any]] = []
        if let offset = cursor.offset {
            let listing = state.listing(of: folderItem.id, recursive: cursor.recursive)
            let end = min(listing.count, offset + cursor.limit)
            entries = listing[min(offset, end)..<end].map { state.metadata($0).json }
            next.offset = end < listing.count ? end : nil
            return .json(200, ["entries": entries, "cursor": next.text, "has_more": next.offset != nil])
        }
        var scanned = index
        while scanned < state.journal.count, entries.count < cursor.limit {
            let change = state.journal[scanned].metadata
            if cursor.covers(change.pathLower) { entries.append(change.json) }
            scanned += 1
        }
        next.position = state.journalBase + scanned
        return .json(200, ["entries": entries, "cursor": next.text, "has_more": scanned < state.journal.count])
    }

    /// A `path_lower` as the components `item(at:)` looks up (case does not matter to it).
    static func names(_ lower: String) -> [String] {
        lower.split(separator: "/").map(String.init)
    }

    /// Holds the answer until the journal has an entry for the cursor's folder, or the timeout (30 to 480 s) passes.
    func longpoll(_ argument: [String: Any]) throws -> MockResponse {
        let cursor = try Cursor(argument["cursor"])
        let timeout = (argument["timeout"] as? NSNumber)?.intValue ?? 30
        guard (30...480).contains(timeout) else {
            throw MockDropboxError.text(400, "request body: timeout: value must be between 30 and 480")
        }
        let deadline = Date().addingTimeInterval(TimeInterval(timeout))
        let changed =
            try longPoll.hold(until: deadline) {
                try state.withLock { state -> Bool? in
                    let index = cursor.position - state.journalBase
                    guard cursor.generation == state.generation, (0...state.journal.count).contains(index) else {
                        throw MockDropboxError.route(["reset"])
                    }
                    return state.journal[index...].contains { cursor.covers($0.metadata.pathLower) } ? true : nil
                }
            } ?? false
        var answer: [String: Any] = ["changes": changed]
        if let backoff = settings.longpollBackoff { answer["backoff"] = backoff }
        return .json(200, answer)
    }
}
