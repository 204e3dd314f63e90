import CCurl
import Foundation
import LLVS
import LLVSHTTP
import LLVSSupport
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// One SFTP operation as libcurl runs it on a connection of the engine: quote commands (mkdir, rename, rm, rmdir)
/// before and after, and at most one of an upload, a download or a directory listing of `url`. libcurl keeps the
/// SSH connection open afterwards for the next operation, so a sign-in is paid once per connection, not per file.
// @unchecked: wraps the easy handle and its callback state, touched by one thread at a time (the caller while
// setting up and reading the result, the engine thread in between); `cancelled` is atomic.
final class SFTPTransfer: CurlOperation, @unchecked Sendable {
    /// What the operation sends.
    enum Body {
        case data(Data)
        /// A local file, read as libcurl asks (the HTTP layer's reader: a file that comes up short aborts).
        case file(FileBodyReader)
    }

    /// Where what the server sends goes.
    enum Sink {
        case discard
        case memory(limit: Int)
        case file(fd: Int32, path: String)
        /// Exactly `length` bytes written at `offset` of the file.
        case region(fd: Int32, path: String, offset: Int64, length: Int64)
    }

    struct Request {
        var url: String
        var quote: [String] = []
        var postQuote: [String] = []
        var body: Body?
        var sink: Sink = .discard
        /// libcurl's range: `a-b`, `a-` or `-n`.
        var range: String?
        /// A listing of names alone, one a line, instead of `ls -l` lines.
        var namesOnly = false
        /// Runs the quote commands only: nothing is transferred (for a folder URL).
        var noBody = false
        /// Asks libcurl to stat the URL's path (a folder URL's stat succeeds for a folder alone).
        var fileTime = false
        /// Makes the folders an upload's URL needs.
        var createMissingFolders = false
        /// On a new connection rather than one the pool holds.
        var freshConnection = false
    }

    let easyHandle: UnsafeMutableRawPointer
    private let cancelled = Atomic<Bool>(false)
    /// When the operation last showed a sign of life (its request starting on a connection, a byte moved), in
    /// uptime nanoseconds; 0 while it waits for a connection or connects (the connect timeout bounds that).
    private let lastActivity = Atomic<UInt64>(0)
    private let stalledFlag = Atomic<Bool>(false)
    private let stallNanoseconds: UInt64

    /// Cancelled by the caller, or stalled: a server that goes silent while quote commands run or a file is opened
    /// meets no libcurl timeout (its low-speed check covers the transfer phase alone), so the engine, which asks this
    /// every 100 ms at most, ends an operation silent for the stall timeout in any phase.
    var isCancelled: Bool {
        if cancelled.load(ordering: .relaxed) { return true }
        let last = lastActivity.load(ordering: .relaxed)
        guard last != 0, DispatchTime.now().uptimeNanoseconds - last > stallNanoseconds else { return false }
        stalledFlag.store(true, ordering: .relaxed)
        return true
    }
    func cancel() { cancelled.store(true, ordering: .relaxed) }
    /// Whether it ended for want of any sign of life from the server.
    var stalled: Bool { stalledFlag.load(ordering: .relaxed) }
    private func touch() { lastActivity.store(DispatchTime.now().uptimeNanoseconds, ordering: .relaxed) }
    /// Bytes each way at the last progress callback, to tell progress from a callback that says nothing moved.
    private var progressSeen: (Int64, Int64) = (0, 0)

    private let request: Request
    private let configuration: SFTPConfiguration
    private var quoteList: UnsafeMutablePointer<curl_slist>?
    private var postQuoteList: UnsafeMutablePointer<curl_slist>?
    private let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
    private var bodyPosition: Int64 = 0
    private(set) var received = Data()
    private(set) var written: Int64 = 0
    private(set) var hostKeyVerdict: SFTPHostKeyVerdict = .accepted
    /// Why a callback stopped the transfer, when one did.
    private(set) var localFailure: CloudFailureNote?

    /// A failure a callback met, said in the connector's words.
    enum CloudFailureNote: Equatable {
        case tooLargeForMemory(limit: Int)
        case localFile(path: String, message: String)
        /// More than the region's `length` bytes came.
        case regionOverrun(length: Int64)
    }

    init(_ request: Request, configuration: SFTPConfiguration) throws {
        CurlEngine.initializeLibrary()
        guard let easy = curl_easy_init() else {
            throw CloudFileSystemError.transient("libcurl could not make a handle")
        }
        easyHandle = easy
        self.request = request
        self.configuration = configuration
        stallNanoseconds = UInt64(max(1, configuration.stallTimeout.components.seconds)) * 1_000_000_000
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        configure()
    }

    deinit {
        if let quoteList { curl_slist_free_all(quoteList) }
        if let postQuoteList { curl_slist_free_all(postQuoteList) }
        curl_easy_cleanup(easyHandle)
        errorBuffer.deallocate()
    }

    private func set(_ option: CURLoption, _ value: Int) { _ = llvs_curl_easy_setopt_long(easyHandle, option, value) }
    private func set(_ option: CURLoption, _ value: String) {
        _ = llvs_curl_easy_setopt_string(easyHandle, option, value)
    }

    private func configure() {
        set(CURLOPT_URL, request.url)
        set(CURLOPT_NOSIGNAL, 1)
        _ = llvs_curl_easy_setopt_pointer(easyHandle, CURLOPT_ERRORBUFFER, UnsafeMutableRawPointer(errorBuffer))
        set(CURLOPT_CONNECTTIMEOUT_MS, Int(configuration.connectTimeout.components.seconds * 1000))
        set(CURLOPT_LOW_SPEED_LIMIT, 1)
        set(CURLOPT_LOW_SPEED_TIME, Int(configuration.stallTimeout.components.seconds))
        set(CURLOPT_TCP_KEEPALIVE, 1)
        set(CURLOPT_USERNAME, configuration.user)
        if let password = configuration.password {
            set(CURLOPT_PASSWORD, password)
            set(CURLOPT_KEYPASSWD, password)
        }
        if let identity = configuration.identityFile { set(CURLOPT_SSH_PRIVATE_KEYFILE, identity) }
        // Public key (and agent) first, then a password; never "host" authentication.
        let publicKey = 1 << 0
        let password = 1 << 1
        let keyboard = 1 << 3
        let agent = 1 << 4
        set(
            CURLOPT_SSH_AUTH_TYPES,
            publicKey | agent | (configuration.password != nil ? password | keyboard : 0))
        set(CURLOPT_SSH_KNOWNHOSTS, configuration.knownHostsFile)
        let context = Unmanaged.passUnretained(self).toOpaque()
        _ = llvs_curl_easy_setopt_pointer(easyHandle, CURLOPT_SSH_KEYDATA, context)
        _ = llvs_curl_easy_setopt_sshkey_callback(easyHandle) { _, _, found, match, context in
            guard let context, let found else { return Int32(CURLKHSTAT_REJECT.rawValue) }
            return Unmanaged<SFTPTransfer>.fromOpaque(context).takeUnretainedValue().judge(found.pointee, match)
        }
        set(CURLOPT_NEW_FILE_PERMS, configuration.fileMode)
        set(CURLOPT_NEW_DIRECTORY_PERMS, configuration.folderMode)
        // Large pieces: libssh2 keeps several SFTP requests in flight within one piece, so bigger ones go faster.
        set(CURLOPT_BUFFERSIZE, 512 << 10)
        set(CURLOPT_UPLOAD_BUFFERSIZE, 2 << 20)
        for command in request.quote { quoteList = curl_slist_append(quoteList, command) }
        for command in request.postQuote { postQuoteList = curl_slist_append(postQuoteList, command) }
        if quoteList != nil { _ = llvs_curl_easy_setopt_slist(easyHandle, CURLOPT_QUOTE, quoteList) }
        if postQuoteList != nil { _ = llvs_curl_easy_setopt_slist(easyHandle, CURLOPT_POSTQUOTE, postQuoteList) }
        if request.noBody { set(CURLOPT_NOBODY, 1) }
        if request.freshConnection { set(CURLOPT_FRESH_CONNECT, 1) }
        if request.fileTime { set(CURLOPT_FILETIME, 1) }
        if request.createMissingFolders { set(CURLOPT_FTP_CREATE_MISSING_DIRS, Int(CURLFTP_CREATE_DIR.rawValue)) }
        if request.namesOnly { set(CURLOPT_DIRLISTONLY, 1) }
        if let range = request.range { set(CURLOPT_RANGE, range) }
        if let body = request.body {
            set(CURLOPT_UPLOAD, 1)
            let length: Int64 =
                switch body {
                case .data(let data): Int64(data.count)
                case .file(let reader): reader.length
                }
            _ = llvs_curl_easy_setopt_off_t(easyHandle, CURLOPT_INFILESIZE_LARGE, curl_off_t(length))
            _ = llvs_curl_easy_setopt_pointer(easyHandle, CURLOPT_READDATA, context)
            _ = llvs_curl_easy_setopt_write_callback(easyHandle, CURLOPT_READFUNCTION) { buffer, size, count, context in
                Unmanaged<SFTPTransfer>.fromOpaque(context!).takeUnretainedValue().fill(buffer!, capacity: size * count)
            }
        }
        _ = llvs_curl_easy_setopt_pointer(easyHandle, CURLOPT_WRITEDATA, context)
        _ = llvs_curl_easy_setopt_write_callback(easyHandle, CURLOPT_WRITEFUNCTION) { buffer, size, count, context in
            Unmanaged<SFTPTransfer>.fromOpaque(context!).takeUnretainedValue().receive(buffer!, count: size * count)
        }
        _ = llvs_curl_easy_setopt_pointer(easyHandle, CURLOPT_PREREQDATA, context)
        _ = llvs_curl_easy_setopt_prereq_callback(easyHandle) { context, _, _, _, _ in
            Unmanaged<SFTPTransfer>.fromOpaque(context!).takeUnretainedValue().touch()
            return Int32(CURL_PREREQFUNC_OK)
        }
        _ = llvs_curl_easy_setopt_pointer(easyHandle, CURLOPT_XFERINFODATA, context)
        _ = llvs_curl_easy_setopt_xferinfo_callback(easyHandle) { context, _, downloaded, _, uploaded in
            let transfer = Unmanaged<SFTPTransfer>.fromOpaque(context!).takeUnretainedValue()
            if (Int64(downloaded), Int64(uploaded)) != transfer.progressSeen {
                transfer.progressSeen = (Int64(downloaded), Int64(uploaded))
                transfer.touch()
            }
            return transfer.isCancelled ? 1 : 0
        }
        set(CURLOPT_NOPROGRESS, 0)
    }

    // MARK: Callbacks (engine thread)

    private func judge(_ found: curl_khkey, _ match: curl_khmatch) -> Int32 {
        if match == CURLKHMATCH_OK { return Int32(CURLKHSTAT_FINE.rawValue) }
        guard let key = SFTPHostKey(found) else { return Int32(CURLKHSTAT_REJECT.rawValue) }
        if match == CURLKHMATCH_MISSING, key.fingerprint == configuration.hostKeyFingerprint {
            return Int32(CURLKHSTAT_FINE.rawValue)
        }
        hostKeyVerdict = match == CURLKHMATCH_MISMATCH ? .changed(key) : .unknown(key)
        return Int32(CURLKHSTAT_REJECT.rawValue)
    }

    private func fill(_ buffer: UnsafeMutablePointer<CChar>, capacity: Int) -> Int {
        switch request.body {
        case .data(let data):
            let count = min(capacity, data.count - Int(bodyPosition))
            guard count > 0 else { return 0 }
            data.withUnsafeBytes { raw in
                UnsafeMutableRawPointer(buffer).copyMemory(
                    from: raw.baseAddress!.advanced(by: Int(bodyPosition)), byteCount: count)
            }
            bodyPosition += Int64(count)
            return count
        case .file(let reader):
            let count = reader.read(at: bodyPosition, into: buffer, capacity: capacity)
            if let failure = reader.failure, case .localFile(let path, let message) = failure {
                localFailure = .localFile(path: path, message: message)
            } else if count > 0 {
                bodyPosition += Int64(count)
            }
            return count
        case nil:
            return 0
        }
    }

    private func receive(_ buffer: UnsafeMutablePointer<CChar>, count: Int) -> Int {
        switch request.sink {
        case .discard:
            return count
        case .memory(let limit):
            guard received.count + count <= limit else {
                localFailure = .tooLargeForMemory(limit: limit)
                return 0
            }
            received.append(UnsafeRawPointer(buffer).assumingMemoryBound(to: UInt8.self), count: count)
            return count
        case .file(let fd, let path):
            return write(buffer, count: count, fd: fd, path: path, at: written)
        case .region(let fd, let path, let offset, let length):
            guard written + Int64(count) <= length else {
                written += Int64(count)
                localFailure = .regionOverrun(length: length)
                return 0
            }
            return write(buffer, count: count, fd: fd, path: path, at: offset + written)
        }
    }

    private func write(
        _ buffer: UnsafeMutablePointer<CChar>, count: Int, fd: Int32, path: String, at offset: Int64
    )
        -> Int
    {
        do {
            try POSIX.write(UnsafeRawBufferPointer(start: buffer, count: count), at: offset, to: fd, path: path)
        } catch {
            localFailure = .localFile(path: path, message: "\(error)")
            return 0
        }
        written += Int64(count)
        return count
    }

    // MARK: Result (caller, after the engine is done)

    /// libcurl's own words for the failure (`rename command failed: …`), or its generic text for the code.
    func message(_ code: CURLcode) -> String {
        let text = String(cString: errorBuffer)
        return text.isEmpty ? String(cString: curl_easy_strerror(code)) : text
    }

    /// The modification time libcurl read with `fileTime`, or nil when the stat failed.
    var fileTime: Int? {
        var value = -1
        _ = llvs_curl_easy_getinfo_long(easyHandle, CURLINFO_FILETIME, &value)
        return value >= 0 ? value : nil
    }
}
