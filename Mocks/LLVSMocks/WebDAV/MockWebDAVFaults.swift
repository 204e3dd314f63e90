import Foundation

/// A WebDAV server's failures by name: a full disk, a lock held by another client, a proxy's body limit, an
/// overloaded server.
extension MockWebDAVServer: MockFaultCatalogue {
    public static var namedFaults: [MockNamedFault] {
        let writes = MockFaultScope(methods: ["PUT", "MKCOL"], describe: "uploads and new folders")
        let changes = MockFaultScope(methods: ["PUT", "DELETE", "MOVE"], describe: "uploads, removals and moves")
        let any = MockFaultScope(describe: "every request")
        let lockBody =
            #"<?xml version="1.0" encoding="utf-8"?><d:error xmlns:d="DAV:"><d:lock-token-submitted><d:href>/</d:href></d:lock-token-submitted></d:error>"#
        func html(_ title: String) -> Data {
            Data(
                "<!DOCTYPE HTML PUBLIC \"-//IETF//DTD HTML 2.0//EN\"><html><head><title>\(title)</title></head><body><h1>\(title)</h1></body></html>"
                    .utf8)
        }
        return [
            MockNamedFault(
                "insufficient-storage", "507 Insufficient Storage: the server's disk or the user's quota is full",
                transient: false,
                scope: writes,
                effect: .answer(
                    .answer(status: 507, headers: ["Content-Type": "text/html"], body: html("507 Insufficient Storage"))
                )),
            MockNamedFault(
                "locked", "423 Locked with a lock-token-submitted body: another client holds a lock", transient: true,
                scope: changes,
                effect: .answer(
                    .answer(
                        status: 423, headers: ["Content-Type": "application/xml; charset=utf-8"],
                        body: Data(lockBody.utf8)))),
            MockNamedFault(
                "too-large", "413 Request Entity Too Large from a proxy's body limit", transient: false,
                scope: MockFaultScope(methods: ["PUT"], describe: "uploads"),
                effect: .answer(
                    .answer(
                        status: 413, headers: ["Content-Type": "text/html"], body: html("413 Request Entity Too Large"))
                )),
            MockNamedFault(
                "unavailable", "503 Service Unavailable with Retry-After", transient: true, scope: any,
                effect: .answer(
                    .answer(
                        status: 503, headers: ["Retry-After": "1", "Content-Type": "text/html"],
                        body: html("503 Service Unavailable")))),
            .listingLag(scope: MockFaultScope(methods: ["PUT"], describe: "uploads")),
            MockNamedFault(
                "too-many-requests", "429 Too Many Requests with Retry-After", transient: true, scope: any,
                effect: .answer(
                    .answer(
                        status: 429, headers: ["Retry-After": "1", "Content-Type": "text/html"],
                        body: html("429 Too Many Requests")))),
        ]
    }
}
