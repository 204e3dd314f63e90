import Foundation
import LLVSHTTP
import LLVSMocks

// llvs-mock: runs a mock service on loopback for manual tests and for `llvs` end-to-end tests.
//
//   llvs-mock SERVICE [--port N] [--faults SPEC] [--user U --password P] [--token-out FILE] [--state DIR]
//
// SERVICE is one of: webdav (as Apache mod_dav answers), webdav-rclone, webdav-nginx, nextcloud, owncloud, gdrive, onedrive, onedrive-business,
// pcloud, pcloud-eu, box, dropbox, s3, oauth.

let usage = """
    usage: llvs-mock SERVICE [--port N] [--faults SPEC] [--user U --password P] [--token-out FILE] [--state DIR]
                     [--approve-devices] [--max-body BYTES] [--quota BYTES]
           llvs-mock SERVICE --list-faults

    Runs a mock service on 127.0.0.1 until interrupted, printing its URL on the first line.

    services:
      webdav          WebDAV as Apache mod_dav answers (the reference server)
      webdav-rclone   WebDAV with rclone serve's answers (201 on an existing folder, 404 for a missing parent)
      webdav-nginx    WebDAV with nginx's answers (no etags, 500 for a missing parent)
      nextcloud       Nextcloud: files at /remote.php/dav/files/USER/ (the URL printed), chunked upload v2 under
                      /remote.php/dav/uploads/USER/, OC-Checksum and oc:checksums, X-OC-Mtime, file IDs, Sabre error
                      bodies, status.php and Login Flow v2 (POST /index.php/login/v2), whose app passwords sign in
                      beside --password; --user defaults to llvs and --password to s3cret-pass
      owncloud        the same, saying ownCloud in status.php
      gdrive          Google Drive API v3 with Google's OAuth endpoints on the same port; prints the endpoint, then
                      the client ID and secret to give `llvs remote add NAME gdrive:/path --endpoint URL --client-id ID`
      onedrive        OneDrive through Microsoft Graph v1.0 (a personal drive) with the Microsoft identity platform's
                      endpoints on the same port, and its upload and download host on a second one; prints the
                      endpoint, then the client ID for `llvs remote add NAME onedrive:/path --endpoint URL --client-id ID`
      onedrive-business   the same as a business drive (QuickXorHash only)
      pcloud          pCloud's API with an account in the US region: the US API host (which also serves the
                      authorize page) on the port printed, the EU host on the next port with --port (another free port
                      without; its URL is eu_endpoint= on the second line), a download host on a third;
                      prints the endpoint, then the client ID and secret for
                      `llvs remote add NAME pcloud:/path --endpoint URL --client-id ID --client-secret-stdin`
      pcloud-eu       the same with the account in the EU region (its token works only on the EU host)
      box             Box API 2.0 (the API at /2.0, uploads at /api/2.0) with Box's OAuth endpoints and single-use refresh
                      tokens on the same port, and its download host on a second one; prints the endpoint, then the
                      client ID and secret for `llvs remote add NAME box:/path --endpoint URL --client-id ID --client-secret-stdin`
      dropbox         Dropbox API v2: the API, content and notify hosts' routes under /2/ and Dropbox's OAuth endpoints
                      (PKCE, offline refresh tokens) on one port; prints the endpoint, then the app key for
                      `llvs remote add NAME dropbox:/path --endpoint URL --client-id KEY`
      s3              S3, path-style, with the bucket llvs; every request's SigV4 signature is checked against the key it
                      prints (access_key_id= secret_access_key=), for
                      `llvs remote add NAME s3://llvs/path --endpoint URL --access-key-id ID --secret-access-key-stdin`
      oauth           an OAuth 2 authorization server alone (authorize, token, device endpoints under /oauth)

    options:
      --port N        listen on port N (default: a free port)
      --faults SPEC   inject faults, e.g. 500@3,503:0.1,retry-after=2,drop:0.05,drop-body@7,truncate:0.01,latency=20ms,seed=9
                      (STATUS@N fails request N; KIND@METHOD*K the first K requests of a method, 503@MOVE*3;
                      KIND:RATE faults that share of requests, drawn per request (method, path,
                      attempt) from the seed, so a seed repeats whatever order requests arrive in; kinds: a status, drop,
                      drop-body, truncate). The service's named faults, as the real service sends them: NAME (the first
                      request it can meet), NAME@N (the Nth), NAME*K (the first K), NAME:RATE (NAME:1: every one)
      --list-faults   print the service's named faults (name, transient or final, what the service sends, what it meets)
                      A running mock takes more: POST a spec to /llvs-mock/faults (curl -X POST --data locked URL/llvs-mock/faults)
      --approve-devices   approve every device-flow code as soon as it is issued (gdrive, onedrive, oauth), so a script
                      can finish a device flow unattended; otherwise open the verification_uri a device flow answers
                      (a page of the mock) and enter the code, or GET it with ?user_code=CODE
      --user U, --password P   require Basic authentication (webdav; nextcloud's account)
      --max-body BYTES         (nextcloud) answer 413 to a request whose body is larger, as a reverse proxy in front does
      --quota BYTES            (nextcloud) the bytes the account may hold: 507 with Sabre's InsufficientStorage above it
      --token-out FILE         write a token the mock accepts, as if a user had authorized (gdrive, onedrive, pcloud,
                               box, dropbox, oauth), mode 0600
      --state DIR              keep what the mock holds in DIR (and the tokens it issued), so a restart finds it again
                               (webdav, nextcloud, gdrive, onedrive, pcloud, box, dropbox, s3; give --port too, so remotes find it at
                               the same address);
                               without it everything is dropped when the mock stops

    """

/// Writes a line unbuffered, so a parent process reading the URL sees it at once.
func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("llvs-mock: \(message)\n".utf8))
    exit(2)
}

var arguments = Array(CommandLine.arguments.dropFirst())
if arguments.isEmpty || arguments.contains("--help") || arguments.contains("-h") {
    print(usage, terminator: "")
    exit(arguments.isEmpty ? 2 : 0)
}
let service = arguments.removeFirst()

/// The named faults of each service, for --faults and --list-faults.
let catalogues: [String: [MockNamedFault]] = [
    "webdav": MockWebDAVServer.namedFaults, "webdav-rclone": MockWebDAVServer.namedFaults,
    "webdav-nginx": MockWebDAVServer.namedFaults,
    "nextcloud": MockWebDAVServer.nextcloudFaults, "owncloud": MockWebDAVServer.nextcloudFaults,
    "gdrive": MockGoogleDriveServer.namedFaults, "onedrive": MockOneDriveServer.namedFaults,
    "onedrive-business": MockOneDriveServer.namedFaults,
    "pcloud": MockPCloudServer.namedFaults, "pcloud-eu": MockPCloudServer.namedFaults, "box": MockBoxServer.namedFaults,
    "dropbox": MockDropboxServer.namedFaults, "s3": MockS3Server.namedFaults,
    "oauth": [MockNamedFault.invalidGrant(tokenPaths: ["/oauth/token"], description: "The refresh token was revoked.")],
]
if arguments.contains("--list-faults") {
    guard let catalogue = catalogues[service] else { fail("unknown service \(service); see llvs-mock --help") }
    for fault in catalogue { print(fault.listing) }
    exit(0)
}
var options: [String: String] = [:]
let approvesDevices = arguments.contains("--approve-devices")
arguments.removeAll { $0 == "--approve-devices" }
while !arguments.isEmpty {
    let name = arguments.removeFirst()
    guard
        ["--port", "--faults", "--user", "--password", "--token-out", "--state", "--max-body", "--quota"].contains(name)
    else { fail("unknown option \(name); see llvs-mock --help") }
    guard !arguments.isEmpty else { fail("\(name) needs a value") }
    options[name] = arguments.removeFirst()
}
var port: UInt16 = 0
if let text = options["--port"] {
    guard let value = UInt16(text) else { fail("--port needs a number from 0 to 65535, not \(text)") }
    port = value
}
let state: MockStateDirectory?
do { state = try options["--state"].map { try MockStateDirectory(URL(fileURLWithPath: $0)) } } catch {
    fail("cannot use --state: \(error)")
}
let faults: MockFaults
do {
    faults =
        try options["--faults"].map { try MockFaults.parse($0, catalogue: catalogues[service] ?? []) } ?? MockFaults()
} catch { fail("\(error)") }

/// Writes an issued token where --token-out says, readable only by its owner.
func writeToken(_ token: OAuthToken, to path: String?) throws {
    guard let path else { return }
    try TokenFile(path: path).write(token)
}

// Watched from before the mock starts, so a signal at any moment after this stops it through `stopRunning`.
do { try StopSignal.install() } catch { fail("cannot watch for SIGINT and SIGTERM: \(error)") }
// Stops the running mock (and keeps it alive until then).
nonisolated(unsafe) var stopRunning: () -> Void = {}
do {
    switch service {
    case "webdav", "webdav-rclone", "webdav-nginx":
        let flavor: MockWebDAVServer.Flavor =
            service == "webdav" ? .apache : service == "webdav-rclone" ? .rclone : .nginx
        let mock = try MockWebDAVServer(
            flavor: flavor, port: port, user: options["--user"], password: options["--password"], faults: faults,
            state: state)
        stopRunning = mock.stop
        say(mock.url.absoluteString)
    case "nextcloud", "owncloud":
        var settings = MockNextcloudSettings()
        settings.productName = service == "nextcloud" ? "Nextcloud" : "ownCloud"
        settings.user = options["--user"] ?? settings.user
        settings.approvesLoginsAtOnce = approvesDevices
        for (option, keyPath) in [
            ("--max-body", \MockNextcloudSettings.maximumBody), ("--quota", \MockNextcloudSettings.quota),
        ] {
            guard let text = options[option] else { continue }
            guard let bytes = Int64(text), bytes >= 0 else { fail("\(option) needs a number of bytes, not \(text)") }
            settings[keyPath: keyPath] = bytes
        }
        let mock = try MockWebDAVServer.nextcloud(
            settings, password: options["--password"] ?? "s3cret-pass", port: port, faults: faults, state: state)
        stopRunning = mock.stop
        say(mock.url.absoluteString)
    case "gdrive":
        var settings = MockGoogleDriveServer.Settings()
        settings.oauth.approvesDevicesAtOnce = approvesDevices
        let mock = try MockGoogleDriveServer(settings: settings, port: port, faults: faults, state: state)
        stopRunning = mock.stop
        try writeToken(mock.issueToken(), to: options["--token-out"])
        say(mock.endpoint.absoluteString)
        say("client_id=\(mock.oauth.settings.clientId) client_secret=\(mock.oauth.settings.clientSecret ?? "")")
    case "onedrive", "onedrive-business":
        var settings = MockOneDriveServer.Settings()
        if service == "onedrive-business" { settings.driveType = .business }
        settings.oauth.approvesDevicesAtOnce = approvesDevices
        let mock = try MockOneDriveServer(settings: settings, port: port, faults: faults, state: state)
        stopRunning = mock.stop
        try writeToken(mock.issueToken(), to: options["--token-out"])
        say(mock.endpoint.absoluteString)
        say("client_id=\(mock.oauth.settings.clientId)")
    case "pcloud", "pcloud-eu":
        var settings = MockPCloudServer.Settings()
        if service == "pcloud-eu" { settings.region = .eu }
        let mock = try MockPCloudServer(settings: settings, port: port, faults: faults, state: state)
        stopRunning = mock.stop
        try writeToken(mock.issueToken(), to: options["--token-out"])
        say(mock.endpoint.absoluteString)
        say(
            "client_id=\(mock.settings.clientId) client_secret=\(mock.settings.clientSecret) eu_endpoint=\(mock.euServer.baseURL.absoluteString)"
        )
        say("username=\(mock.settings.username) password=\(mock.settings.password)")
    case "box":
        let mock = try MockBoxServer(port: port, faults: faults, state: state)
        stopRunning = mock.stop
        try writeToken(mock.issueToken(), to: options["--token-out"])
        say(mock.endpoint.absoluteString)
        say("client_id=\(mock.oauth.settings.clientId) client_secret=\(mock.oauth.settings.clientSecret ?? "")")
    case "dropbox":
        let mock = try MockDropboxServer(port: port, faults: faults, state: state)
        stopRunning = mock.stop
        try writeToken(mock.issueToken(), to: options["--token-out"])
        say(mock.endpoint.absoluteString)
        say("client_id=\(mock.oauth.settings.clientId)")
    case "s3":
        let mock = try MockS3Server(port: port, faults: faults, state: state)
        stopRunning = mock.stop
        say(mock.endpoint.absoluteString)
        say("access_key_id=\(mock.settings.accessKeyID) secret_access_key=\(mock.settings.secretAccessKey) bucket=llvs")
    case "oauth":
        var settings = MockOAuthServer.Settings()
        settings.approvesDevicesAtOnce = approvesDevices
        let oauth = MockOAuthServer(settings: settings)
        try writeToken(oauth.issueToken(), to: options["--token-out"])
        let server = try MockHTTPServer(port: port, faults: faults) { request in oauth.handle(request) ?? .empty(404) }
        stopRunning = server.stop
        say(server.baseURL.appendingPathComponent(oauth.settings.pathPrefix).absoluteString)
        say("client_id=\(oauth.settings.clientId) client_secret=\(oauth.settings.clientSecret ?? "")")
    default:
        fail("unknown service \(service); see llvs-mock --help")
    }
} catch {
    fail("cannot start \(service): \(error)")
}
StopSignal.wait()
stopRunning()
exit(0)
