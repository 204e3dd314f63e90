import Foundation
import LLVS
import LLVSMocks
import LLVSTestSupport
import LLVSWebDAV
import Testing

/// Every failure `llvs-mock webdav --list-faults` names, met by the connector: a lock and an overloaded server
/// waited out, a full disk and a proxy's body limit ending with what the server said.
@Suite struct WebDAVNamedFaultTests {
    static let finalReasons = ["insufficient-storage": "no room", "too-large": "body limit"]

    @Test(arguments: MockWebDAVServer.namedFaults.map(\.name))
    func theConnectorHandlesTheNamedFault(name: String) async throws {
        let fault = try #require(MockWebDAVServer.namedFaults[named: name])
        let mock = try MockWebDAVServer()
        defer { mock.stop() }
        let fileSystem = WebDAVFileSystem(configuration: WebDAVConfiguration(url: mock.url), http: quickClient())
        await expectNamedFaultHandled(
            fault, fileSystem: fileSystem, faults: mock.faults, workload: NamedFaultWorkload(largeSize: 600 * 1024),
            finalReason: Self.finalReasons[name])
    }
}
