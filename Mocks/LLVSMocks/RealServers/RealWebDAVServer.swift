import Foundation
import LLVSSupport
import LLVSHTTP
#if canImport(Glibc)
import Glibc
#endif

/// Starts real WebDAV servers from Debian's packages (Apache with mod_dav, nginx with dav-ext, `rclone serve webdav`,
/// SabreDAV — the library Nextcloud and ownCloud serve WebDAV with — under PHP's built-in server)
/// on loopback, each with Basic authentication, and stops them when released. Tests and benchmarks use them side by side with the mocks.
public final class RealWebDAVServer: Sendable {
    public let name: String
    /// The collection's URL, ending in `/`.
    public let url: URL
    /// The folder on disk that the server serves.
    public let dataFolder: URL
    public let user = RealWebDAVServer.user
    public let password = RealWebDAVServer.password
    static let user = "llvs"
    static let password = "s3cret-pass"
    private let process: SpawnedProcess
    private let folder: URL

    public static let apacheBinary = "/usr/sbin/apache2"
    public static let rcloneBinary = "/usr/bin/rclone"
    public static let nginxBinary = "/usr/sbin/nginx"
    public static let nginxDAVModule = "/usr/lib/nginx/modules/ngx_http_dav_ext_module.so"
    public static let phpBinary = "/usr/bin/php"
    public static let sabreAutoload = "/usr/share/php/Sabre/autoload.php"

    /// Why a real server cannot run here, or nil when it can. In CI a missing server is a failure, not a skip.
    public static func unavailable(_ binary: String) -> String? {
        guard FileManager.default.isExecutableFile(atPath: binary) else {
            return
                "\(binary) is not installed (apt-get install apache2 apache2-utils rclone nginx-core libnginx-mod-http-dav-ext php-cli php-sabre-dav)"
        }
        if binary == phpBinary, !FileManager.default.fileExists(atPath: sabreAutoload) {
            return "\(sabreAutoload) is not installed (apt-get install php-sabre-dav)"
        }
        if binary == nginxBinary, !FileManager.default.fileExists(atPath: nginxDAVModule) {
            return "\(nginxDAVModule) is not installed (apt-get install libnginx-mod-http-dav-ext)"
        }
        return nil
    }

    private init(name: String, url: URL, dataFolder: URL, process: SpawnedProcess, folder: URL) {
        self.name = name
        self.url = url
        self.dataFolder = dataFolder
        self.process = process
        self.folder = folder
    }

    deinit {
        process.stop()
        try? FileManager.default.removeItem(at: folder)
    }

    /// A port nothing listens on now. Another process may take it before the server binds it; `start` then tries
    /// another.
    public static func freePort() throws -> UInt16 {
        let listener = try TCPListener()
        defer { listener.close() }
        return listener.port
    }

    static func run(_ path: String, _ arguments: [String]) throws {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
    }

    /// What one attempt at starting a server made.
    struct Started {
        var process: SpawnedProcess
        var url: URL
        var dataFolder: URL
    }

    /// Starts a server on a free port, made by `make`, and waits until it is this server that answers: it must serve
    /// a file of random contents put in its data folder, which another process that took the port (another test's
    /// mock) cannot. A server that could not bind (the port was taken in between) ends or never serves the file; it
    /// is stopped and started again on another port.
    static func start(
        _ name: String, folder: URL, firstPort: UInt16?, attempts: Int = 5, make: (UInt16) throws -> Started
    ) async throws -> RealWebDAVServer {
        var failure = ""
        for attempt in 0..<attempts {
            let started = try make(attempt == 0 ? try firstPort ?? freePort() : try freePort())
            do {
                try await waitUntilReady(name, started)
                return RealWebDAVServer(
                    name: name, url: started.url, dataFolder: started.dataFolder, process: started.process,
                    folder: folder)
            } catch {
                failure = "\(error)"
                started.process.stop()
            }
        }
        try? FileManager.default.removeItem(at: folder)
        throw HTTPError.transport(
            code: 7, message: "\(name) did not start in \(attempts) attempts: \(failure)", url: "")
    }

    /// Waits until the server serves the readiness file from its data folder (then removed), giving up when its
    /// process has ended or after a minute. None of these servers says on any stream that it is ready, so it is asked,
    /// every 100 ms; the bound is far above the second or two a start takes on a busy machine.
    static func waitUntilReady(_ name: String, _ server: Started) async throws {
        let (url, dataFolder, process) = (server.url, server.dataFolder, server.process)
        var configuration = HTTPClientConfiguration(environment: [:])
        configuration.retryPolicy = RetryPolicy(maximumAttempts: 1)
        let http = HTTPClient(configuration: configuration)
        let file = ".llvs-ready-\(UUID().uuidString)", token = Data(UUID().uuidString.utf8)
        let marker = dataFolder.appendingPathComponent(file)
        try token.write(to: marker)
        defer { try? FileManager.default.removeItem(at: marker) }
        for _ in 0..<600 {
            guard process.isRunning else {
                throw HTTPError.transport(code: 7, message: "\(name) ended on start", url: url.absoluteString)
            }
            var request = HTTPRequest(method: "GET", url: url.appendingPathComponent(file))
            request.credentials = HTTPCredentials(user: user, password: password, scheme: .any)
            if let response = try? await http.send(request), response.status == 200, response.body == token { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw HTTPError.transport(code: 7, message: "\(name) did not serve its data folder", url: url.absoluteString)
    }

    /// `firstPort` is tried first instead of a free one (a test takes it to show that a taken port is survived).
    public static func apache(firstPort: UInt16? = nil) async throws -> RealWebDAVServer {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("llvs-apache-\(UUID().uuidString)")
        let data = folder.appendingPathComponent("data")
        try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
        let modules = "/usr/lib/apache2/modules"
        let passwords = folder.appendingPathComponent("htpasswd").path
        try run("/usr/bin/htpasswd", ["-bc", passwords, "llvs", "s3cret-pass"])
        let runAsRoot = getuid() == 0
        return try await start("Apache mod_dav", folder: folder, firstPort: firstPort) { port in
            let config = """
                ServerRoot \(folder.path)
                Listen 127.0.0.1:\(port)
                PidFile \(folder.path)/httpd.pid
                ErrorLog \(folder.path)/error.log
                LoadModule mpm_event_module \(modules)/mod_mpm_event.so
                LoadModule authz_core_module \(modules)/mod_authz_core.so
                LoadModule authz_user_module \(modules)/mod_authz_user.so
                LoadModule authn_core_module \(modules)/mod_authn_core.so
                LoadModule authn_file_module \(modules)/mod_authn_file.so
                LoadModule auth_basic_module \(modules)/mod_auth_basic.so
                LoadModule mime_module \(modules)/mod_mime.so
                LoadModule dav_module \(modules)/mod_dav.so
                LoadModule dav_fs_module \(modules)/mod_dav_fs.so
                LoadModule dav_lock_module \(modules)/mod_dav_lock.so
                LoadModule alias_module \(modules)/mod_alias.so
                LogFormat "%I" received
                CustomLog \(folder.path)/received.log received
                \(runAsRoot ? "User www-data\nGroup www-data" : "")
                ServerName 127.0.0.1
                TypesConfig /dev/null
                DavLockDB \(folder.path)/davlock
                Alias /dav \(data.path)
                <Directory \(data.path)>
                    Dav On
                    AuthType Basic
                    AuthName "llvs"
                    AuthUserFile \(passwords)
                    Require valid-user
                </Directory>
                """
            let configPath = folder.appendingPathComponent("httpd.conf")
            try config.write(to: configPath, atomically: true, encoding: .utf8)
            if runAsRoot { try run("/bin/chown", ["-R", "www-data:www-data", folder.path]) }
            let process = try SpawnedProcess(["/usr/sbin/apache2", "-f", configPath.path, "-DFOREGROUND"])
            return Started(process: process, url: URL(string: "http://127.0.0.1:\(port)/dav/")!, dataFolder: data)
        }
    }

    /// Bytes Apache has received so far (request lines, headers and bodies, aborted requests included), from its
    /// log: what a client sent, counted at the server. Zero for the other servers, which keep no such log.
    public func bytesReceived() -> Int64 {
        guard let text = try? String(contentsOf: folder.appendingPathComponent("received.log"), encoding: .utf8) else {
            return 0
        }
        return text.split(separator: "\n").reduce(0) { $0 + (Int64($1) ?? 0) }
    }

    /// nginx with its own WebDAV module (PUT, DELETE, MKCOL, COPY, MOVE) and dav-ext (PROPFIND, OPTIONS), as people
    /// serve files with it; its quirks (a PUT into a missing folder is a 500, hrefs with raw `[ ] ( ) '`) are the
    /// connector's to absorb.
    public static func nginx() async throws -> RealWebDAVServer {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("llvs-nginx-\(UUID().uuidString)")
        let data = folder.appendingPathComponent("dav")
        try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
        let passwords = folder.appendingPathComponent("htpasswd").path
        try run("/usr/bin/htpasswd", ["-bc", passwords, "llvs", "s3cret-pass"])
        let runAsRoot = getuid() == 0
        return try await start("nginx dav-ext", folder: folder, firstPort: nil) { port in
            let config = """
                load_module \(nginxDAVModule);
                \(runAsRoot ? "user www-data;" : "")
                daemon off;
                worker_processes 2;
                pid \(folder.path)/nginx.pid;
                error_log \(folder.path)/error.log;
                events { worker_connections 512; }
                http {
                    access_log off;
                    client_body_temp_path \(folder.path)/body;
                    proxy_temp_path \(folder.path)/proxy;
                    fastcgi_temp_path \(folder.path)/fastcgi;
                    uwsgi_temp_path \(folder.path)/uwsgi;
                    scgi_temp_path \(folder.path)/scgi;
                    server {
                        listen 127.0.0.1:\(port);
                        root \(folder.path);
                        location /dav/ {
                            dav_methods PUT DELETE MKCOL COPY MOVE;
                            dav_ext_methods PROPFIND OPTIONS;
                            dav_access user:rw group:rw all:r;
                            client_max_body_size 0;
                            auth_basic "llvs";
                            auth_basic_user_file \(passwords);
                        }
                    }
                }
                """
            let configPath = folder.appendingPathComponent("nginx.conf")
            try config.write(to: configPath, atomically: true, encoding: .utf8)
            if runAsRoot { try run("/bin/chown", ["-R", "www-data:www-data", folder.path]) }
            let process = try SpawnedProcess([
                nginxBinary, "-c", configPath.path, "-p", folder.path + "/", "-e", folder.path + "/error.log",
            ])
            return Started(process: process, url: URL(string: "http://127.0.0.1:\(port)/dav/")!, dataFolder: data)
        }
    }

    /// SabreDAV's file server (Debian's php-sabre-dav, the 1.8 series) with Basic authentication, under PHP's built-in
    /// server with four workers. It answers as Sabre does (its status codes, its error bodies, its namespaces), which
    /// Nextcloud's WebDAV builds on; it has none of what Nextcloud adds (chunked upload v2, `oc:` properties,
    /// `X-OC-Mtime`, app passwords), which the Nextcloud mock holds the connector to.
    public static func sabre() async throws -> RealWebDAVServer {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("llvs-sabre-\(UUID().uuidString)")
        let data = folder.appendingPathComponent("data"), empty = folder.appendingPathComponent("docroot")
        for made in [data, empty, folder.appendingPathComponent("tmp")] {
            try FileManager.default.createDirectory(at: made, withIntermediateDirectories: true)
        }
        func quoted(_ path: String) -> String {
            "'" + path.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'"
        }
        let script = """
            <?php
            require_once 'Sabre/autoload.php';
            class LLVSBasicAuth extends \\Sabre\\DAV\\Auth\\Backend\\AbstractBasic {
                protected function validateUserPass($username, $password) {
                    return $username === '\(user)' && $password === '\(password)';
                }
            }
            $server = new \\Sabre\\DAV\\Server(new \\Sabre\\DAV\\FS\\Directory(\(quoted(data.path))));
            $server->setBaseUri('/dav/');
            $server->addPlugin(new \\Sabre\\DAV\\Auth\\Plugin(new LLVSBasicAuth(), 'llvs'));
            $server->addPlugin(new \\Sabre\\DAV\\Locks\\Plugin(new \\Sabre\\DAV\\Locks\\Backend\\File(\(quoted(folder.appendingPathComponent("tmp/locks").path)))));
            $server->exec();
            """
        let router = folder.appendingPathComponent("server.php")
        try script.write(to: router, atomically: true, encoding: .utf8)
        return try await start("SabreDAV (PHP)", folder: folder, firstPort: nil) { port in
            let process = try SpawnedProcess([
                "/usr/bin/env", "PHP_CLI_SERVER_WORKERS=4", phpBinary, "-d", "memory_limit=256M", "-S",
                "127.0.0.1:\(port)",
                "-t", empty.path, router.path,
            ])
            return Started(process: process, url: URL(string: "http://127.0.0.1:\(port)/dav/")!, dataFolder: data)
        }
    }

    public static func rclone() async throws -> RealWebDAVServer {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("llvs-rclone-\(UUID().uuidString)")
        try FileManager.default.createDirectory(
            at: folder.appendingPathComponent("data"), withIntermediateDirectories: true)
        return try await start("rclone serve webdav", folder: folder, firstPort: nil) { port in
            let process = try SpawnedProcess([
                "/usr/bin/rclone", "serve", "webdav", folder.appendingPathComponent("data").path,
                "--addr", "127.0.0.1:\(port)", "--user", "llvs", "--pass", "s3cret-pass", "--config", "/dev/null",
            ])
            return Started(
                process: process, url: URL(string: "http://127.0.0.1:\(port)/")!,
                dataFolder: folder.appendingPathComponent("data"))
        }
    }
}

/// A server process started with posix_spawn in a process group of its own and with no signal blocked (the test
/// runner's threads block signals, and a child would inherit that mask and ignore SIGTERM). `stop` ends the whole
/// group, workers included, and reaps the leader.
public final class SpawnedProcess: Sendable {
    public let pid: pid_t

    /// `output`: a descriptor the program's standard output and error go to (else /dev/null).
    public init(_ arguments: [String], output: Int32? = nil) throws {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGTERM)
        sigaddset(&defaults, SIGINT)
        sigaddset(&defaults, SIGPIPE)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(
            &attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP))
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let output {
            posix_spawn_file_actions_adddup2(&actions, output, 1)
            posix_spawn_file_actions_adddup2(&actions, output, 2)
        } else {
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
            posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        }
        // A server outlives many tests: a pipe another test had open when it started must not stay open in it.
        SpawnFileActions.closeInheritedDescriptors(&actions)
        var pid: pid_t = 0
        let argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let result = posix_spawn(&pid, arguments[0], &actions, &attributes, argv, environ)
        guard result == 0 else {
            throw HTTPError.localFile(path: arguments[0], message: String(cString: strerror(result)))
        }
        self.pid = pid
    }

    /// False once the process has ended (and it is then reaped).
    public var isRunning: Bool {
        var status: Int32 = 0
        return waitpid(pid, &status, WNOHANG) == 0
    }

    public func stop() {
        kill(-pid, SIGTERM)
        var status: Int32 = 0
        for _ in 0..<50 {
            if waitpid(pid, &status, WNOHANG) == pid { kill(-pid, SIGKILL); return }
            usleep(100_000)
        }
        kill(-pid, SIGKILL)
        waitpid(pid, &status, 0)
    }
}

extension SpawnedProcess {
    /// Starts a server and returns once a line of its output contains `announcement` (what it prints when it
    /// listens), reading its output as it comes: no polling. Nil when it ended, or said nothing of the kind within
    /// `timeout` (it is stopped then). Its later output is read and dropped, so it never blocks on a full pipe.
    public static func announcing(
        _ arguments: [String], _ announcement: String, timeout: TimeInterval = 180
    ) async throws -> SpawnedProcess? {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else {
            throw HTTPError.localFile(path: arguments[0], message: String(cString: strerror(errno)))
        }
        // Neither end goes on to the program itself (it gets the writer as its output), nor to other children.
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        let (reader, writer) = (ends[0], ends[1])
        let process: SpawnedProcess
        do {
            process = try SpawnedProcess(arguments, output: writer)
        } catch {
            close(reader)
            close(writer)
            throw error
        }
        close(writer)
        let announced = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            Thread {
                let deadline = Date().addingTimeInterval(timeout)
                var seen = Data(), resumed = false
                var buffer = [UInt8](repeating: 0, count: 65_536)
                while true {
                    if !resumed {
                        var descriptor = pollfd(fd: reader, events: Int16(POLLIN), revents: 0)
                        let left = Int32(max(0, deadline.timeIntervalSinceNow * 1000))
                        if poll(&descriptor, 1, left) <= 0 {
                            continuation.resume(returning: false)
                            resumed = true
                            continue
                        }
                    }
                    let count = read(reader, &buffer, buffer.count)
                    if count <= 0 { break }
                    guard !resumed else { continue }
                    seen.append(contentsOf: buffer[0..<count])
                    if seen.range(of: Data(announcement.utf8)) != nil {
                        continuation.resume(returning: true)
                        resumed = true
                    }
                }
                close(reader)
                if !resumed { continuation.resume(returning: false) }
            }.start()
        }
        guard announced else {
            process.stop()
            return nil
        }
        return process
    }
}
