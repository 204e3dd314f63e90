import LLVSHTTP

/// What each WebDAV method's status means, server by server (docs/services/webdav.md has the table): the one place
/// the connector reads statuses besides `WebDAVClassifier`, which turns the failures into the shared vocabulary.
enum WebDAVAnswer {
    /// PROPFIND: 207 is the listing; 404 and 410 say nothing is there.
    enum Listing { case listed, absent, failed }
    static func propfind(_ response: HTTPResponse) -> Listing {
        switch response.status {
        case 207: .listed
        case 404, 410: .absent
        default: .failed
        }
    }

    /// MKCOL: made (200, 201, 204); the parent missing (409); the name taken (405 from Apache, nginx, lighttpd,
    /// wsgidav; 301 from servers that redirect to the collection's URL with a slash); perhaps taken (403 when
    /// another client made it a moment ago, 400 when a file has the name), which only a look can tell from a refusal.
    enum FolderMaking { case made, parentMissing, taken, perhapsTaken, failed }
    static func mkcol(_ response: HTTPResponse) -> FolderMaking {
        switch response.status {
        case 200, 201, 204: .made
        case 409: .parentMissing
        case 301, 405: .taken
        case 400, 403: .perhapsTaken
        default: .failed
        }
    }

    /// PUT: stored (201 new; 200 or 204 replaced); the parent missing (409 from Apache, lighttpd, wsgidav; 404 from
    /// rclone; 500 from nginx); a folder in the way (405 or 409 once the parent is known to exist); a file already
    /// there for a PUT with `If-None-Match: *` (412).
    enum Storing { case stored, parentMissing, refused, somethingThere, failed }
    static func put(_ response: HTTPResponse) -> Storing {
        switch response.status {
        case 200, 201, 204: .stored
        case 404, 409, 500: .parentMissing
        default: .failed
        }
    }

    /// The statuses `put` calls a missing parent: answered at once by making the folder, not retried first.
    static let parentMissingStatuses: Set<Int> = [404, 409, 500]

    /// What `finishPut` makes of an answer once the parent exists: a 405 or 409 there means something that is not
    /// a file holds the name.
    static func finishedPut(_ response: HTTPResponse) -> Storing {
        switch response.status {
        case 200, 201, 204: .stored
        case 405, 409: .refused
        case 412: .somethingThere
        default: .failed
        }
    }

    /// MOVE: moved (200, 201, 204; nginx answers 204 for a new name); 404 when the source is gone, which for a
    /// MOVE sent again after a lost answer means it was done.
    enum Moving { case moved, sourceGone, failed }
    static func move(_ response: HTTPResponse) -> Moving {
        switch response.status {
        case 200, 201, 204: .moved
        case 404: .sourceGone
        default: .failed
        }
    }

    /// GET: servers answer a folder's URL with a redirect (301, 302), 403, 405, or (Sabre, so Nextcloud) 501.
    static func mayBeAFolder(_ response: HTTPResponse) -> Bool { [301, 302, 403, 405, 501].contains(response.status) }

    /// DELETE: removed (200, 202, 204), or nothing there (404); 207 means part of it could not be removed.
    enum Removing { case removed, partly, failed }
    static func delete(_ response: HTTPResponse) -> Removing {
        switch response.status {
        case 200, 202, 204, 404: .removed
        case 207: .partly
        default: .failed
        }
    }
}
