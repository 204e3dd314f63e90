import CCurl
import Foundation
import LLVS
import LLVSHTTP
import LLVSSupport
#if canImport(Glibc)
import Glibc
#endif

/// A folder on an SSH server, over SFTP through libcurl (docs/services/sftp.md). Files go up under a temporary name
/// in their folder and are renamed into place, so readers never see part of one; OpenSSH's rename never replaces
/// (it links), so a file that must be replaced is removed first, which leaves a moment with no file there (SFTP
/// version 3 has no replacing rename). Operations share a few SSH connections (`SFTPConfiguration.connections`),
/// each signed in once.
public final class SFTPFileSystem: CloudFileSystem {
    public let configuration: SFTPConfiguration
    private let engine: CurlEngine
    private let retry: RetryPolicy

    /// The prefix of the temporary names uploads write to; listings leave such names out.
    public static let temporaryPrefix = ".llvs-upload-"

    public init(configuration: SFTPConfiguration, retry: RetryPolicy = RetryPolicy()) {
        self.configuration = configuration
        self.retry = retry
        engine = CurlEngine(
            maximumConnectionsPerHost: configuration.connections, maximumTotalConnections: configuration.connections,
            name: "llvs-sftp")
    }

    deinit { engine.shutdown() }

    /// A rename never replaces on OpenSSH, so `.create` is refused by the server itself where a file is.
    public var capabilities: CloudCapabilities {
        var capabilities = CloudCapabilities.plain
        capabilities.exclusiveCreate = true
        return capabilities
    }

    public func stager(for path: String) async throws -> FileStager { .plain }

    // MARK: Paths

    /// The components of a path; a name with a line break is refused, as listings are read a line an entry.
    private func components(_ path: String) throws -> [String] {
        let components = try CloudPath.components(path)
        guard !components.contains(where: { $0.contains(where: \.isNewline) }) else {
            throw CloudFileSystemError.invalidPath(path)
        }
        return components
    }

    private func folderURL(_ components: [String]) -> String {
        configuration.url(configuration.serverPath(components, folder: true))
    }

    private func fileURL(_ components: [String]) -> String {
        configuration.url(configuration.serverPath(components))
    }

    private func quoted(_ components: [String]) -> String {
        SFTPConfiguration.quoted(configuration.serverPath(components))
    }

    // MARK: Listing

    public func list(_ folder: String) async throws -> [CloudItem] {
        try await answering(folder) {
            let components = try components(folder)
            let listed = try await entries(of: components, folder: folder)
            await removeAbandoned(listed, in: components)
            return items(listed)
        }
    }

    /// Every entry of a folder as the server lists it, temporaries, links and devices included.
    private func entries(of components: [String], folder: String) async throws -> [SFTPListing.Entry] {
        let transfer: SFTPTransfer
        do {
            transfer = try await run(
                .init(url: folderURL(components), sink: .memory(limit: configuration.memoryReadLimit)), path: folder)
        } catch CloudFileSystemError.notFound(let path) {
            // OpenSSH says "no such file" for a file opened as a folder too.
            if try await kind(of: components) == .file {
                throw CloudFileSystemError.wrongKind(path: folder, expectedFolder: true)
            }
            throw CloudFileSystemError.notFound(path: path)
        }
        do { return try SFTPListing.parse(transfer.received) } catch let unreadable as SFTPListing.Unreadable {
            throw CloudFileSystemError.server(
                status: 502,
                message: "the server's listing of \(folder) has a line in no known form: \(unreadable.line)")
        }
    }

    /// How long an upload's temporary file goes unwritten before it counts as abandoned (its writer was killed): a
    /// temporary being written is touched with every piece.
    static let abandonedAfter: TimeInterval = 24 * 3600

    /// Removes the temporary files of uploads killed part way that a listing shows, once even the latest moment their
    /// time can mean is over `abandonedAfter` ago. Failures are left for a later listing.
    private func removeAbandoned(_ entries: [SFTPListing.Entry], in folder: [String]) async {
        let now = Date()
        let cutoff = now.addingTimeInterval(-Self.abandonedAfter)
        let abandoned = entries.filter {
            $0.kind == .file && $0.name.hasPrefix(Self.temporaryPrefix)
                && ($0.latestModified(now: now) ?? .distantFuture) < cutoff
        }
        guard !abandoned.isEmpty else { return }
        _ = try? await run(
            .init(url: folderURL([]), quote: abandoned.map { "*rm " + quoted(folder + [$0.name]) }, noBody: true),
            path: folder.joined(separator: "/"))
    }

    private func items(_ entries: [SFTPListing.Entry]) -> [CloudItem] {
        entries.compactMap { entry in
            guard !entry.name.hasPrefix(Self.temporaryPrefix) else { return nil }
            switch entry.kind {
            case .file: return CloudItem(name: entry.name, isFolder: false, size: entry.size)
            case .folder: return CloudItem(name: entry.name, isFolder: true)
            // Links and devices are nothing LLVS wrote; a link's target is not known from the listing.
            case .link, .other: return nil
            }
        }
    }

    public func listNames(_ folder: String) async throws -> [String] {
        try await answering(folder) {
            let components = try components(folder)
            do {
                let transfer = try await run(
                    .init(
                        url: folderURL(components), sink: .memory(limit: configuration.memoryReadLimit), namesOnly: true
                    ),
                    path: folder)
                return SFTPListing.names(transfer.received).filter { !$0.hasPrefix(Self.temporaryPrefix) }
            } catch CloudFileSystemError.notFound {
                if try await kind(of: components) == .file {
                    throw CloudFileSystemError.wrongKind(path: folder, expectedFolder: true)
                }
                return []
            }
        }
    }

    public func metadata(_ path: String) async throws -> CloudItem {
        try await answering(path) {
            let components = try components(path)
            guard let name = components.last else { return CloudItem(name: "", isFolder: true) }
            let parent = Array(components.dropLast())
            let listed: [CloudItem]
            do { listed = try await list(parent.joined(separator: "/")) } catch CloudFileSystemError.wrongKind {
                throw CloudFileSystemError.notFound(path: path)
            }
            guard let item = listed.first(where: { $0.name == name }) else {
                throw CloudFileSystemError.notFound(path: path)
            }
            return item
        }
    }

    public func exists(_ path: String) async throws -> Bool {
        do {
            _ = try await metadata(path)
            return true
        } catch CloudFileSystemError.notFound {
            return false
        }
    }

    enum Kind { case file, folder, missing }

    /// What is at a path: to say why an operation failed where the server only says it failed.
    private func kind(of components: [String]) async throws -> Kind {
        do {
            let item = try await metadata(components.joined(separator: "/"))
            return item.isFolder ? .folder : .file
        } catch CloudFileSystemError.notFound {
            return .missing
        }
    }

    // MARK: Writing

    public func makeFolder(_ path: String) async throws {
        try await answering(path) {
            let components = try components(path)
            var commands: [String] = []
            // The root's own folders first (they may be missing on first use), then the path's.
            let rootComponents = configuration.root.split(separator: "/").map(String.init)
            let homeRelative = rootComponents.first == "~"
            var prefix = ""
            for (index, component) in rootComponents.enumerated() {
                prefix += "/" + component
                if homeRelative && index == 0 { continue }
                commands.append("*mkdir " + SFTPConfiguration.quoted(prefix))
            }
            for count in components.indices {
                commands.append("*mkdir " + quoted(Array(components[...count])))
            }
            // The folder URL's stat (libcurl's file time) succeeds for a folder alone: one request makes and checks.
            let transfer = try await run(
                .init(url: folderURL(components), quote: commands, noBody: true, fileTime: true), path: path)
            guard transfer.fileTime == nil else { return }
            for count in components.indices where try await kind(of: Array(components[...count])) == .file {
                throw CloudFileSystemError.wrongKind(
                    path: components[...count].joined(separator: "/"), expectedFolder: true)
            }
            throw CloudFileSystemError.server(
                status: 403, message: "the server did not make the folder \(path) (no permission to write its parent?)")
        }
    }

    public func upload(_ source: UploadSource, to path: String, mode: UploadMode) async throws {
        try await answering(path) {
            let components = try components(path)
            guard !components.isEmpty else { throw CloudFileSystemError.invalidPath(path) }
            let parent = Array(components.dropLast())
            let temporary = parent + [Self.temporaryPrefix + UUID().uuidString.lowercased()]
            let body: SFTPTransfer.Body
            switch source {
            case .data(let data):
                body = .data(data)
            case .file(let url, let size), .staged(let url, let size):
                do { body = .file(try FileBodyReader(path: url.path, length: size)) } catch HTTPError.localFile(
                    let path, let message)
                {
                    throw CloudFileSystemError.localFile(path: path, message: message)
                }
            }
            do {
                var request = SFTPTransfer.Request(
                    url: fileURL(temporary), postQuote: placing(temporary, at: components, mode: mode), body: body)
                request.createMissingFolders = true
                _ = try await run(request, path: path)
                return
            } catch let failure as SFTPAmbiguousFailure where failure.kind == .quote {
                // The file went up; the rename did not: something is at the name (a file written meanwhile, a folder).
                try await settle(temporary: temporary, at: components, mode: mode, reason: failure.message)
            } catch {
                await removeQuietly(temporary)
                throw error
            }
        }
    }

    /// The commands that put an uploaded temporary in place: a rename, which never replaces, so `.replace` removes
    /// the file there first.
    private func placing(_ temporary: [String], at components: [String], mode: UploadMode) -> [String] {
        (mode == .replace ? ["*rm " + quoted(components)] : []) + ["rename \(quoted(temporary)) \(quoted(components))"]
    }

    /// After a rename that failed: a file already there is the same bytes (`newName`) or is replaced (`replace`, a
    /// writer that got in between the removal and the rename); a folder there is the wrong kind.
    private func settle(
        temporary: [String], at components: [String], mode: UploadMode, reason: String
    ) async throws {
        let path = components.joined(separator: "/")
        for _ in 0..<3 {
            switch try await kind(of: components) {
            case .folder:
                await removeQuietly(temporary)
                throw CloudFileSystemError.wrongKind(path: path, expectedFolder: false)
            case .file where mode == .newName:
                await removeQuietly(temporary)
                return
            case .file where mode == .create:
                await removeQuietly(temporary)
                throw CloudFileSystemError.alreadyExists(path: path)
            case .file, .missing:
                do {
                    _ = try await run(
                        .init(url: folderURL([]), quote: placing(temporary, at: components, mode: mode), noBody: true),
                        path: path)
                    return
                } catch let failure as SFTPAmbiguousFailure where failure.kind == .quote {
                    continue
                }
            }
        }
        await removeQuietly(temporary)
        throw CloudFileSystemError.server(
            status: 500, message: "the upload to \(path) could not be renamed into place: \(reason)")
    }

    private func removeQuietly(_ components: [String]) async {
        _ = try? await run(.init(url: folderURL([]), quote: ["*rm " + quoted(components)], noBody: true), path: "")
    }

    public func removeFile(_ path: String) async throws {
        try await answering(path) {
            let components = try components(path)
            guard !components.isEmpty else { throw CloudFileSystemError.invalidPath(path) }
            do {
                _ = try await run(
                    .init(url: folderURL([]), quote: ["rm " + quoted(components)], noBody: true), path: path)
            } catch CloudFileSystemError.notFound {
                return
            } catch let failure as SFTPAmbiguousFailure where failure.kind == .quote {
                switch try await kind(of: components) {
                case .missing: return
                case .folder: throw CloudFileSystemError.wrongKind(path: path, expectedFolder: false)
                case .file: throw failure.settled(path: path)
                }
            }
        }
    }

    public func removeFolder(_ path: String) async throws {
        try await answering(path) {
            let components = try components(path)
            let listed: [SFTPListing.Entry]
            do { listed = try await entries(of: components, folder: path) } catch CloudFileSystemError.notFound {
                return
            }
            for entry in listed where entry.kind == .folder {
                try await removeFolder((components + [entry.name]).joined(separator: "/"))
            }
            // Everything else in it (temporaries and links too), then the folder, in one request: each a round trip
            // on one connection.
            let others = listed.filter { $0.kind != .folder }.map { "*rm " + quoted(components + [$0.name]) }
            guard !components.isEmpty else {
                // The root itself stays (it is the remote); its contents go.
                _ = try await run(.init(url: folderURL([]), quote: others, noBody: true), path: path)
                return
            }
            do {
                _ = try await run(
                    .init(url: folderURL([]), quote: others + ["rmdir " + quoted(components)], noBody: true),
                    path: path)
            } catch let failure as SFTPAmbiguousFailure where failure.kind == .quote {
                // Something was written into it meanwhile: once more, from the listing.
                guard try await kind(of: components) != .missing else { return }
                let remaining = try await list(path)
                guard !remaining.isEmpty else { throw failure.settled(path: path) }
                try await removeFolder(path)
            }
        }
    }

    // MARK: Reading

    public func read(_ path: String, range: ByteRange?) async throws -> Data {
        try await answering(path) {
            let components = try components(path)
            guard !components.isEmpty else { throw CloudFileSystemError.wrongKind(path: path, expectedFolder: false) }
            let limit = configuration.memoryReadLimit
            do {
                guard let range else {
                    return try await run(.init(url: fileURL(components), sink: .memory(limit: limit)), path: path)
                        .received
                }
                let data = try await run(
                    .init(url: fileURL(components), sink: .memory(limit: limit), range: Self.curlRange(range)),
                    path: path
                ).received
                // Every satisfiable range has a byte; nothing means it starts at or past the end.
                guard !data.isEmpty else { throw Self.unsatisfiable(range, path) }
                if case .last(let count) = range, data.count < count {
                    // libcurl drops the first byte of a file no longer than a suffix range asks: the whole file is it.
                    return try await run(.init(url: fileURL(components), sink: .memory(limit: limit)), path: path)
                        .received
                }
                return data
            } catch let failure as SFTPAmbiguousFailure where failure.kind == .rangeOutside {
                throw range.map { Self.unsatisfiable($0, path) } ?? failure.settled(path: path)
            } catch let failure as SFTPAmbiguousFailure where failure.kind == .operation {
                let message = failure.message
                throw try await diagnoseRead(components, path: path, message: message)
            }
        }
    }

    static func curlRange(_ range: ByteRange) -> String {
        switch range {
        case .bytes(let a, let b): "\(a)-\(b)"
        case .from(let a): "\(a)-"
        case .last(let n): "-\(n)"
        }
    }

    static func unsatisfiable(_ range: ByteRange, _ path: String) -> CloudFileSystemError {
        .server(status: 416, message: "range \(range.httpValue) is outside the file \(path)")
    }

    /// A read the server failed: a folder read as a file, or what the server said.
    private func diagnoseRead(
        _ components: [String], path: String, message: String
    ) async throws
        -> CloudFileSystemError
    {
        switch try await kind(of: components) {
        case .folder: .wrongKind(path: path, expectedFolder: false)
        case .missing: .notFound(path: path)
        case .file: SFTPAmbiguousFailure(kind: .operation, message: message).settled(path: path)
        }
    }

    public func download(_ path: String, to destination: DownloadDestination) async throws {
        try await answering(path) {
            let components = try components(path)
            guard !components.isEmpty else { throw CloudFileSystemError.wrongKind(path: path, expectedFolder: false) }
            switch destination {
            case .file(let url):
                let fd = open(url.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
                guard fd >= 0 else {
                    throw CloudFileSystemError.localFile(path: url.path, message: String(cString: strerror(errno)))
                }
                defer { close(fd) }
                do {
                    _ = try await run(.init(url: fileURL(components), sink: .file(fd: fd, path: url.path)), path: path)
                } catch {
                    unlink(url.path)
                    if let failure = error as? SFTPAmbiguousFailure, failure.kind == .operation {
                        throw try await diagnoseRead(components, path: path, message: failure.message)
                    }
                    throw error
                }
            case .region(let url, let offset, let length):
                let fd = open(url.path, O_WRONLY | O_CLOEXEC)
                guard fd >= 0 else {
                    throw CloudFileSystemError.localFile(path: url.path, message: String(cString: strerror(errno)))
                }
                defer { close(fd) }
                let transfer: SFTPTransfer
                do {
                    transfer = try await run(
                        .init(
                            url: fileURL(components),
                            sink: .region(fd: fd, path: url.path, offset: offset, length: length)), path: path)
                } catch let failure as SFTPAmbiguousFailure where failure.kind == .operation {
                    let message = failure.message
                    throw try await diagnoseRead(components, path: path, message: message)
                }
                guard transfer.written == length else {
                    throw CloudFileSystemError.sizeMismatch(path: path, expected: length, received: transfer.written)
                }
            }
        }
    }

    // MARK: Running

    /// Runs a public operation; a failure no look settled says what the server said.
    private func answering<T>(_ path: String, _ body: () async throws -> T) async throws -> T {
        do { return try await body() } catch let failure as SFTPAmbiguousFailure { throw failure.settled(path: path) }
    }

    /// Runs one operation, trying again after a dropped connection, a timeout or a refused connection (each
    /// operation may be repeated: an upload goes to a new temporary name, a removal of what is gone is fine).
    private func run(_ request: SFTPTransfer.Request, path: String) async throws -> SFTPTransfer {
        var request = request
        var freshTried = false
        return try await retry.run({
            let transfer = try SFTPTransfer(request, configuration: configuration)
            let code: CURLcode
            do { code = try await engine.perform(transfer) } catch HTTPError.cancelled {
                guard transfer.stalled else { throw CancellationError() }
                throw CloudFileSystemError.transient(
                    "the SFTP server \(configuration.knownHostsName) said nothing for \(configuration.stallTimeout) during an operation on \(path)"
                )
            }
            if code == CURLE_OK { return transfer }
            let failure = SFTPFailureMapping.failure(code, transfer: transfer, configuration: configuration, path: path)
            // An operation that failed without saying why may have met a session that died under it: once more on
            // a new connection, where a real refusal (a folder read as a file) comes again.
            if let ambiguous = failure as? SFTPAmbiguousFailure, ambiguous.kind == .operation, !freshTried {
                freshTried = true
                request.freshConnection = true
                throw CloudFileSystemError.transient(ambiguous.message)
            }
            throw failure
        }) { error in
            if case CloudFileSystemError.transient = error { return .retry(after: nil) }
            return .fail
        }
    }
}
