import Foundation
import LLVS
import LLVSHTTP
import Testing
@testable import LLVSWebDAV

/// What a failed answer says to the user: the status, its reason and the path; a server's words when it wrote them
/// for a client (Sabre's XML), never a whole HTML error page.
@Suite struct WebDAVErrorMessageTests {
    static let apachePage = """
        <!DOCTYPE HTML PUBLIC "-//IETF//DTD HTML 2.0//EN">
        <html><head>
        <title>507 Insufficient Storage</title>
        </head><body>
        <h1>Insufficient Storage</h1>
        <p>The method could not be performed on the resource
        because the server is unable to store the
        representation needed to successfully complete the
        request.  There is insufficient free space left in
        your storage allocation.</p>
        <hr>
        <address>Apache/2.4.62 (Debian) Server at 127.0.0.1 Port 8080</address>
        </body></html>
        """

    func failure(_ status: Int, _ body: String) -> String {
        let response = HTTPResponse(status: status, body: Data(body.utf8), url: URL(string: "http://127.0.0.1/dav/x")!)
        return "\(WebDAVClassifier(host: "127.0.0.1").failure(response, path: "/backups/changes/ABC"))"
    }

    @Test func a507FromApacheSaysStatusReasonAndPathWithoutItsPage() {
        let message = failure(507, Self.apachePage)
        #expect(
            message.contains("507") && message.contains("Insufficient Storage")
                && message.contains("/backups/changes/ABC"), "\(message)")
        #expect(!message.contains("<") && !message.contains("Apache/2.4"), "\(message)")
    }

    @Test func anotherStatusWithAnHTMLPageIsShortToo() {
        let message = failure(
            403, Self.apachePage.replacingOccurrences(of: "507 Insufficient Storage", with: "403 Forbidden"))
        #expect(
            message.contains("403") && message.contains("Forbidden") && message.contains("/backups/changes/ABC"),
            "\(message)")
        #expect(!message.contains("<"), "\(message)")
    }

    @Test func sabresMessageIsKept() {
        let sabre = """
            <?xml version="1.0" encoding="utf-8"?>
            <d:error xmlns:d="DAV:" xmlns:s="http://sabredav.org/ns">
              <s:exception>Sabre\\DAV\\Exception\\InsufficientStorage</s:exception>
              <s:message>Insufficient space in /files/me, 12 required, 0 available</s:message>
            </d:error>
            """
        let message = failure(507, sabre)
        #expect(message.contains("Insufficient space in /files/me, 12 required, 0 available"), "\(message)")
        #expect(!message.contains("<s:"), "\(message)")
    }
}
