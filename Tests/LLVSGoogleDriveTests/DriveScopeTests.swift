import Foundation
import LLVS
import LLVSGoogleDrive
import LLVSHTTP
import LLVSMocks
import LLVSTestSupport
import Synchronization
import Testing

/// Google's device flow allows only `drive.file` (and `drive.appdata`) of Drive's scopes: the default scope signs in
/// by device code, the full scope offers no device endpoint, and the mock refuses a device code for it as Google does.
@Suite struct DriveScopeTests {
    @Test func theDefaultScopeSignsInByDeviceCode() async throws {
        let mock = try MockGoogleDriveServer()
        defer { mock.stop() }
        let configuration = GoogleDriveConfiguration.oauth(
            clientId: mock.oauth.settings.clientId, clientSecret: mock.oauth.settings.clientSecret,
            endpoint: mock.endpoint)
        #expect(configuration.scopes == ["https://www.googleapis.com/auth/drive.file"])
        let userCode = Mutex("")
        let token = try await OAuthAuthorization(configuration: configuration, http: quickClient()).authorizeWithDevice(
            sleep: { _ in
                mock.oauth.approveDevice(userCode: userCode.withLock { $0 })
            }, show: { code, _, _ in userCode.withLock { $0 = code } })
        #expect(mock.oauth.isAuthorized("Bearer \(token.accessToken)"))
    }

    @Test func theFullScopeHasNoDeviceFlowAndTheMockRefusesIt() async throws {
        let mock = try MockGoogleDriveServer()
        defer { mock.stop() }
        let full = GoogleDriveConfiguration.oauth(
            clientId: mock.oauth.settings.clientId, clientSecret: mock.oauth.settings.clientSecret,
            scope: .full, endpoint: mock.endpoint)
        #expect(full.deviceAuthorizationURL == nil)
        // Asked anyway (as the connector used to), the device endpoint answers as Google's does.
        var asked = full
        asked.deviceAuthorizationURL = mock.endpoint.appendingPathComponent("device/code")
        await #expect {
            _ = try await OAuthAuthorization(configuration: asked, http: quickClient()).authorizeWithDevice(
                sleep: { _ in }, show: { _, _, _ in })
        } throws: { error in
            guard case OAuthError.tokenEndpoint(400, "invalid_scope", let description) = error else { return false }
            return description.contains("auth/drive")
        }
    }
}
