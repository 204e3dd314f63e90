import CCurl
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The outcome of one transfer: the answer libcurl got.
struct CurlResult: Sendable {
    var status: Int
    var headers: HTTPHeaders
    var body: Data
    var url: URL
}

/// One attempt at one request: a libcurl easy handle with its callbacks, body source and response sink.
/// Set up on the caller's task, driven only by the engine's thread until it completes, then read on the caller's task.
// @unchecked: wraps the CURL easy handle and its C callback state, touched by one thread at a time (the caller
// while setting up, then only the engine thread); `cancelled` is atomic.
final class CurlTransfer: CurlOperation, @unchecked Sendable {
    let easy: UnsafeMutableRawPointer
    var easyHandle: UnsafeMutableRawPointer { easy }
    var isCancelled: Bool { cancelled.load(ordering: .relaxed) }
    func cancel() { cancelled.store(true, ordering: .relaxed) }
    let request: HTTPRequest
    private var headerList: UnsafeMutablePointer<curl_slist>?
    private var mime: OpaquePointer?
    /// The readers of the form's file parts, kept for as long as the MIME body that calls them.
    private var formFiles: [FileBodyReader] = []
    let cancelled = Atomic<Bool>(false)

    // Request body.
    private var bodyData = Data()
    private var bodyFile: FileBodyReader?
    private var bodyLength: Int64 = 0
    private var bodyPosition: Int64 = 0
    /// Whether any of the server's answer arrived (a status line), so a rewind of the body is libcurl answering it (a
    /// challenge, a redirect), not resending in silence.
    private var answerStarted = false
    /// Ends the upload with a dropped connection once half the body is sent (an injected fault).
    private let droppingBodyHalfWay: Bool

    // Response.
    private let responseBody = ResponseBuffer()
    private var memoryLimit = 0
    private var responseFD: Int32 = -1
    /// For a `.region` destination: where in the file the answer goes, how long it must be, and how much of it came.
    private var region: (offset: Int64, length: Int64)?
    private var regionWritten: Int64 = 0
    /// The status of the answer whose body is arriving (from its status line).
    private var answerStatus = 0
    /// How much of a failure's body is kept when the answer was to go to a file.
    static let failureBodyLimit = 64 * 1024
    private(set) var failure: HTTPError?
    /// The fields of the answer whose headers are arriving.
    private var headers = HTTPHeaders()

    private let budget: MemoryBudget?
    /// Bytes of `budget` this transfer holds.
    private var reserved = 0

    init(
        request: HTTPRequest, configuration: HTTPClientConfiguration, budget: MemoryBudget? = nil,
        droppingBodyHalfWay: Bool = false
    ) throws {
        self.budget = budget
        self.droppingBodyHalfWay = droppingBodyHalfWay
        guard let easy = curl_easy_init() else {
            throw HTTPError.transport(
                code: -1, message: "libcurl could not make a handle", url: request.url.absoluteString)
        }
        self.easy = easy
        self.request = request
        do { try configure(configuration) } catch {
            cleanUp()
            throw error
        }
    }

    deinit {
        budget?.release(reserved)
        cleanUp()
    }

    /// Set once the handle is freed: an initializer that throws runs this and then `deinit` runs it again.
    private var cleanedUp = false

    private func cleanUp() {
        guard !cleanedUp else { return }
        cleanedUp = true
        if let headerList { curl_slist_free_all(headerList); self.headerList = nil }
        if let mime { curl_mime_free(mime); self.mime = nil }
        bodyFile = nil
        if responseFD >= 0 { close(responseFD); responseFD = -1 }
        curl_easy_cleanup(easy)
    }

    private func set(_ option: CURLoption, _ value: Int) { _ = llvs_curl_easy_setopt_long(easy, option, value) }
    private func set(_ option: CURLoption, _ value: String) { _ = llvs_curl_easy_setopt_string(easy, option, value) }

    private func configure(_ configuration: HTTPClientConfiguration) throws {
        let url = request.url.absoluteString
        set(CURLOPT_URL, url)
        set(CURLOPT_NOSIGNAL, 1)
        set(CURLOPT_FOLLOWLOCATION, 0)
        set(CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_2TLS))
        set(CURLOPT_CONNECTTIMEOUT_MS, Int(configuration.connectTimeout.components.seconds * 1000))
        // A transfer that moves less than the minimum rate for this long has stalled (or is trickled on purpose).
        set(CURLOPT_LOW_SPEED_LIMIT, max(1, configuration.minimumTransferRate))
        set(CURLOPT_LOW_SPEED_TIME, Int((request.stallTimeout ?? configuration.stallTimeout).components.seconds))
        set(CURLOPT_TCP_KEEPALIVE, 1)
        // Answers are read in pieces of up to 256 KiB, not libcurl's default 16 KiB: a download of many megabytes
        // then costs a sixteenth of the receive calls and write callbacks.
        set(CURLOPT_BUFFERSIZE, 256 << 10)
        set(CURLOPT_USERAGENT, configuration.userAgent)
        if let bundle = configuration.caBundle { set(CURLOPT_CAINFO, bundle) }
        if let host = request.url.host, configuration.insecureHosts.contains(host) {
            set(CURLOPT_SSL_VERIFYPEER, 0)
            set(CURLOPT_SSL_VERIFYHOST, 0)
        }
        if let credentials = request.credentials {
            set(CURLOPT_USERNAME, credentials.user)
            set(CURLOPT_PASSWORD, credentials.password)
            // CURLAUTH_BASIC (1) and CURLAUTH_DIGEST (2) are shifted-constant macros Swift cannot import.
            let scheme =
                switch credentials.scheme {
                case .basic: 1
                case .digest: 2
                case .any: 1 | 2
                }
            set(CURLOPT_HTTPAUTH, scheme)
        }

        // Headers, with `Expect:` emptied so an upload never waits for a 100 Continue.
        var fields = request.headers.fields.map { "\($0.name): \($0.value)" }
        fields.append("Expect:")
        for field in fields { headerList = curl_slist_append(headerList, field) }
        _ = llvs_curl_easy_setopt_slist(easy, CURLOPT_HTTPHEADER, headerList)

        let context = Unmanaged.passUnretained(self).toOpaque()
        try configureBody(context)
        try configureResponse(context)
        _ = llvs_curl_easy_setopt_pointer(easy, CURLOPT_XFERINFODATA, context)
        _ = llvs_curl_easy_setopt_xferinfo_callback(easy) { context, _, _, uploadTotal, uploaded in
            let transfer = Unmanaged<CurlTransfer>.fromOpaque(context!).takeUnretainedValue()
            return transfer.cancelled.load(ordering: .relaxed)
                || transfer.cutsFormHalfWay(total: uploadTotal, sent: uploaded) ? 1 : 0
        }
        set(CURLOPT_NOPROGRESS, 0)
    }

    private func configureBody(_ context: UnsafeMutableRawPointer) throws {
        let method = request.method.uppercased()
        switch request.body {
        case .none:
            switch method {
            case "GET": set(CURLOPT_HTTPGET, 1)
            case "HEAD": set(CURLOPT_NOBODY, 1)
            default: set(CURLOPT_CUSTOMREQUEST, method)
            }
            return
        case .form(let parts):
            try configureForm(parts, method: method)
            return
        case .data(let data):
            bodyData = data
            bodyLength = Int64(data.count)
        case .file(let url, let offset, let length):
            let file = try FileBodyReader(path: url.path, offset: offset, length: length)
            bodyFile = file
            bodyLength = file.length
        }
        // Any method with a body goes through the upload path; the method name is set explicitly.
        set(CURLOPT_UPLOAD, 1)
        _ = llvs_curl_easy_setopt_off_t(easy, CURLOPT_INFILESIZE_LARGE, curl_off_t(bodyLength))
        if method != "PUT" { set(CURLOPT_CUSTOMREQUEST, method) }
        _ = llvs_curl_easy_setopt_pointer(easy, CURLOPT_READDATA, context)
        _ = llvs_curl_easy_setopt_write_callback(easy, CURLOPT_READFUNCTION) { buffer, size, count, context in
            Unmanaged<CurlTransfer>.fromOpaque(context!).takeUnretainedValue().fill(buffer!, capacity: size * count)
        }
        _ = llvs_curl_easy_setopt_pointer(easy, CURLOPT_SEEKDATA, context)
        _ = llvs_curl_easy_setopt_seek_callback(easy) { context, offset, origin in
            let transfer = Unmanaged<CurlTransfer>.fromOpaque(context!).takeUnretainedValue()
            guard origin == SEEK_SET, offset >= 0, Int64(offset) <= transfer.bodyLength else { return 1 }
            guard transfer.mayRewind else { return 1 }
            transfer.bodyPosition = Int64(offset)
            return 0
        }
    }

    /// libcurl builds the multipart body, boundary and Content-Type, and streams file parts itself.
    private func configureForm(_ parts: [FormPart], method: String) throws {
        guard let mime = curl_mime_init(easy) else {
            throw HTTPError.transport(
                code: -1, message: "libcurl could not make a MIME body", url: request.url.absoluteString)
        }
        self.mime = mime
        for part in parts {
            guard let handle = curl_mime_addpart(mime) else {
                throw HTTPError.transport(
                    code: -1, message: "libcurl could not add a MIME part", url: request.url.absoluteString)
            }
            curl_mime_name(handle, part.name)
            switch part.content {
            case .data(let data):
                // libcurl copies the bytes.
                if data.isEmpty {
                    curl_mime_data(handle, "", 0)
                } else {
                    data.withUnsafeBytes { raw in
                        _ = curl_mime_data(handle, raw.baseAddress!.assumingMemoryBound(to: CChar.self), raw.count)
                    }
                }
            case .file(let url):
                let reader = try FileBodyReader(path: url.path)
                formFiles.append(reader)
                reader.attach(to: handle)
            }
            // The name the service is to see, or none.
            curl_mime_filename(handle, part.filename)
            if let type = part.contentType { curl_mime_type(handle, type) }
        }
        _ = llvs_curl_easy_setopt_pointer(easy, CURLOPT_MIMEPOST, UnsafeMutableRawPointer(mime))
        if method != "POST" { set(CURLOPT_CUSTOMREQUEST, method) }
    }

    private func configureResponse(_ context: UnsafeMutableRawPointer) throws {
        switch request.destination {
        case .memory(let limit):
            memoryLimit = limit
        case .file(let url):
            let fd = open(url.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            guard fd >= 0 else { throw HTTPError.localFile(path: url.path, message: String(cString: strerror(errno))) }
            responseFD = fd
        case .region(let url, let offset, let length):
            guard offset >= 0, length >= 0 else {
                throw HTTPError.localFile(path: url.path, message: "the region \(offset)+\(length) is not one")
            }
            let fd = open(url.path, O_WRONLY | O_CLOEXEC)
            guard fd >= 0 else { throw HTTPError.localFile(path: url.path, message: String(cString: strerror(errno))) }
            responseFD = fd
            region = (offset, length)
        }
        _ = llvs_curl_easy_setopt_pointer(easy, CURLOPT_WRITEDATA, context)
        _ = llvs_curl_easy_setopt_write_callback(easy, CURLOPT_WRITEFUNCTION) { buffer, size, count, context in
            Unmanaged<CurlTransfer>.fromOpaque(context!).takeUnretainedValue().receive(buffer!, count: size * count)
        }
        _ = llvs_curl_easy_setopt_pointer(easy, CURLOPT_HEADERDATA, context)
        _ = llvs_curl_easy_setopt_write_callback(easy, CURLOPT_HEADERFUNCTION) { buffer, size, count, context in
            let transfer = Unmanaged<CurlTransfer>.fromOpaque(context!).takeUnretainedValue()
            transfer.header(HTTPHeaders.line(UnsafeRawBufferPointer(start: buffer, count: size * count)))
            return size * count
        }
    }

    /// The local file answers go to, for messages.
    private var destinationPath: String {
        switch request.destination {
        case .memory: "memory"
        case .file(let url), .region(let url, _, _): url.path
        }
    }

    // MARK: Callbacks (engine thread)

    /// An injected mid-body drop of a multipart form, which libcurl reads itself (a body the read callback gives is
    /// cut there, in `fill`): the transfer is stopped once half the form has gone, so the server got part of it.
    private func cutsFormHalfWay(total: curl_off_t, sent: curl_off_t) -> Bool {
        guard droppingBodyHalfWay, mime != nil, total > 0, sent * 2 >= total else { return false }
        failure = .transport(
            code: 55, message: "the connection dropped while the body was sent (an injected fault)",
            url: request.url.absoluteString)
        return true
    }

    private func fill(_ buffer: UnsafeMutablePointer<CChar>, capacity: Int) -> Int {
        var remaining = bodyLength - bodyPosition
        if droppingBodyHalfWay {
            remaining = bodyLength / 2 - bodyPosition
            guard remaining > 0 else {
                failure = .transport(
                    code: 55, message: "the connection dropped while the body was sent (an injected fault)",
                    url: request.url.absoluteString)
                return Int(CURL_READFUNC_ABORT)
            }
        }
        let count = Int(min(Int64(capacity), remaining))
        guard count > 0 else { return 0 }
        if let bodyFile {
            let n = bodyFile.read(at: bodyPosition, into: buffer, capacity: count)
            if bodyFile.failure == nil { bodyPosition += Int64(n) }
            return n
        }
        bodyData.withUnsafeBytes { raw in
            let start = raw.baseAddress!.advanced(by: Int(bodyPosition))
            UnsafeMutableRawPointer(buffer).copyMemory(from: start, byteCount: count)
        }
        bodyPosition += Int64(count)
        return count
    }

    private func receive(_ buffer: UnsafeMutablePointer<CChar>, count: Int) -> Int {
        if responseFD >= 0, !(200..<300).contains(answerStatus) {
            // A failure's body goes to memory, where the service's reason can be read (Drive says whether a 403 is a
            // rate limit to wait out or a final refusal only there), and the destination file is left empty. Only
            // its start is kept: it explains, it is not data.
            let kept = min(count, Self.failureBodyLimit - responseBody.count)
            guard kept > 0 else { return count }
            let taken = keep(buffer, count: kept, limit: Self.failureBodyLimit)
            return taken == kept ? count : 0
        }
        if responseFD >= 0 {
            if let region, regionWritten + Int64(count) > region.length {
                // Not one byte past the region: the next piece of the file, or its end, is not this answer's.
                failure = .unexpectedLength(
                    expected: region.length, received: regionWritten + Int64(count), url: request.url.absoluteString)
                return 0
            }
            var done = 0
            while done < count {
                let n =
                    if let region {
                        pwrite(
                            responseFD, buffer + done, count - done, off_t(region.offset + regionWritten + Int64(done)))
                    } else {
                        write(responseFD, buffer + done, count - done)
                    }
                if n < 0 {
                    if errno == EINTR { continue }
                    failure = .localFile(path: destinationPath, message: String(cString: strerror(errno)))
                    return 0
                }
                done += n
            }
            regionWritten += Int64(count)
            return count
        }
        guard responseBody.count + count <= memoryLimit else {
            failure = .responseTooLarge(limit: memoryLimit, url: request.url.absoluteString)
            return 0
        }
        return keep(buffer, count: count, limit: memoryLimit)
    }

    /// Appends to the in-memory body, charging the budget for its block; 0 when memory is refused.
    private func keep(_ buffer: UnsafeMutablePointer<CChar>, count: Int, limit: Int) -> Int {
        var capacity = responseBody.capacity(toHold: count, limit: limit)
        // An answer that announces its length gets a block of that size at once: not one grown (and copied) half as
        // much again at a time, which copies a 5 MB snapshot chunk about twice over, nor the 256 KiB first block a
        // small answer needs a fraction of. A server that sends more than it announced makes the block grow as usual.
        if responseBody.count == 0 {
            var announced: curl_off_t = -1
            _ = llvs_curl_easy_getinfo_off_t(easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &announced)
            if announced >= Int64(count), announced <= Int64(limit) { capacity = Int(announced) }
        }
        if capacity > responseBody.capacity {
            // While the block grows the old one and the new one are both held: the budget is charged for the new one
            // before, and the old one is given back after.
            let old = responseBody.capacity
            if let budget {
                guard budget.reserve(capacity) else {
                    failure = .memoryBudgetExceeded(limit: budget.limit, url: request.url.absoluteString)
                    return 0
                }
                reserved += capacity
            }
            guard responseBody.grow(to: capacity) else {  // the system has no memory for it
                failure = .memoryBudgetExceeded(limit: capacity, url: request.url.absoluteString)
                return 0
            }
            if let budget {
                budget.release(old)
                reserved -= old
            }
        }
        responseBody.append(buffer, count: count)
        return count
    }

    /// libcurl resends a request in silence when a reused connection dies before any answer (it takes the server for
    /// one that closed an idle connection). For a request that must not run twice (a create) the server may have
    /// acted already, so the body is not given again: the transfer fails, and the caller looks for what landed
    /// (`createOnce`) instead of making a second file.
    private var mayRewind: Bool { request.repeatable || answerStarted || bodyPosition == 0 }

    private func header(_ line: HTTPHeaders.Line) {
        switch line {
        case .status(let code):
            answerStarted = true
            // Each new status line (after a 100 Continue or an authentication challenge) starts a new set of headers.
            answerStatus = code
            headers = HTTPHeaders()
            responseBody.reset()
            budget?.release(reserved)
            reserved = 0
            if region != nil {
                regionWritten = 0
            } else if responseFD >= 0 {
                _ = ftruncate(responseFD, 0)
                _ = lseek(responseFD, 0, SEEK_SET)
            }
        case .field(let name, let value):
            headers.add(name, value)
        case .other:
            break
        }
    }

    /// The answer, once libcurl finished with `code`.
    func result(code: CURLcode) -> Result<CurlResult, any Error> {
        // The body leaves the transfer here: from now on it is the caller's, and out of the in-flight budget.
        defer {
            responseBody.reset()  // a failed answer's bytes go with the budget they were charged to
            budget?.release(reserved)
            reserved = 0
        }
        if let failure { return .failure(failure) }
        if let fileFailure = ([bodyFile].compactMap { $0 } + formFiles).lazy.compactMap(\.failure).first {
            return .failure(fileFailure)
        }
        if code == CURLE_ABORTED_BY_CALLBACK, cancelled.load(ordering: .relaxed) {
            return .failure(HTTPError.cancelled)
        }
        guard code == CURLE_OK else {
            let message = String(cString: curl_easy_strerror(code))
            return .failure(
                HTTPError.transport(code: Int32(code.rawValue), message: message, url: request.url.absoluteString))
        }
        var status = 0
        _ = llvs_curl_easy_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status)
        if let region, (200..<300).contains(status), regionWritten != region.length {
            return .failure(
                HTTPError.unexpectedLength(
                    expected: region.length, received: regionWritten, url: request.url.absoluteString))
        }
        return .success(CurlResult(status: status, headers: headers, body: responseBody.take(), url: request.url))
    }
}
