import Foundation
import LLVS
import LLVSMocks
import LLVSTestSupport
import Testing

/// A create whose answer is lost after Drive made the file: Drive keeps two files of one name, so the request must not
/// be sent again in silence. libcurl resends a request when a reused connection dies before any answer; the transfer
/// refuses to give a create's body again, and the connector finds the file that landed.
@Suite struct DriveLostAnswerTests {
    @Test func aNewFileWhoseAnswerIsLostIsMadeOnce() async throws {
        let fixture = try DriveFixture()
        // The folder's creation leaves a connection to reuse.
        try await fixture.fileSystem.makeFolder("f")
        fixture.mock.faults.inject(.dropBeforeAnswer, times: 1) {
            $0.method == "POST" && $0.path.hasPrefix("/upload/")
        }
        try await fixture.fileSystem.upload(Data("created once".utf8), to: "f/created.txt")
        #expect(fixture.mock.count(named: "created.txt") == 1)
        #expect(fixture.mock.log.filter { $0.method == "POST" && $0.target.hasPrefix("/upload/") }.count == 1)
        #expect(try await fixture.fileSystem.download("f/created.txt") == Data("created once".utf8))
    }
}
