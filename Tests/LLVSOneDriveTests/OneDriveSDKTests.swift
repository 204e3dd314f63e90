import Foundation
import LLVS
import LLVSTestSupport
import LLVSHTTP
import LLVSMocks
import LLVSTestSupport
import Testing

/// The mock held to the real service by Microsoft's own Graph SDK for Python (msgraph-sdk, installed into
/// .build/clients-venv by scripts/install-client-libraries, which scripts/test runs).
@Suite struct OneDriveSDKTests {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let python = packageRoot.appendingPathComponent(".build/clients-venv/bin/python")
    static let script = packageRoot.appendingPathComponent("Tests/Clients/onedrive_msgraph_sdk.py")
    static var sdkInstalled: Bool {
        guard FileManager.default.isExecutableFile(atPath: python.path) else { return false }
        let check = Process()
        check.executableURL = python
        check.arguments = ["-c", "import msgraph, httpx"]
        check.standardOutput = FileHandle.nullDevice
        check.standardError = FileHandle.nullDevice
        guard (try? check.run()) != nil else { return false }
        check.waitUntilExit()
        return check.terminationStatus == 0
    }

    @Test(.enabled(if: sdkInstalled, "msgraph-sdk is not installed in .build/clients-venv; run scripts/install-client-libraries"),
          arguments: [MockOneDriveServer.Settings.DriveType.personal, .business])
    func microsoftsGraphSDKWorksAgainstTheMock(driveType: MockOneDriveServer.Settings.DriveType) async throws {
        var settings = MockOneDriveServer.Settings()
        settings.driveType = driveType
        let mock = try MockOneDriveServer(settings: settings)
        defer { mock.stop() }
        let outcome = try await runProgram(Self.python, [Self.script.path, mock.endpoint.absoluteString, mock.issueToken().accessToken])
        #expect(outcome.status == 0, "the SDK failed against the mock:\n\(outcome.errors.suffix(3000))")
        #expect(outcome.output.trimmingCharacters(in: .whitespacesAndNewlines) == "ok")
        #expect(mock.contentHost.requestsWithCredentials.isEmpty, "the SDK sent its token to the upload or download host")
        #expect(mock.log.contains { $0.target.contains("delta") })
    }
}
