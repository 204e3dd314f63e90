import Foundation
import LLVS
import LLVSHTTP
import LLVSMocks
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
    func microsoftsGraphSDKWorksAgainstTheMock(driveType: MockOneDriveServer.Settings.DriveType) throws {
        var settings = MockOneDriveServer.Settings()
        settings.driveType = driveType
        let mock = try MockOneDriveServer(settings: settings)
        defer { mock.stop() }
        let process = Process()
        process.executableURL = Self.python
        process.arguments = [Self.script.path, mock.endpoint.absoluteString, mock.issueToken().accessToken]
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let failure = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "the SDK failed against the mock:\n\(failure.suffix(3000))")
        #expect(printed.trimmingCharacters(in: .whitespacesAndNewlines) == "ok")
        #expect(mock.contentHost.requestsWithCredentials.isEmpty, "the SDK sent its token to the upload or download host")
        #expect(mock.log.contains { $0.target.contains("delta") })
    }
}
