import Foundation
import LLVS
import LLVSHTTP
import LLVSMocks
#if canImport(Glibc)
import Glibc
#endif

/// The process's peak resident memory so far, in MiB.
func peakResidentMiB() -> Double {
    var usage = rusage()
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    return Double(usage.ru_maxrss) / 1024  // ru_maxrss is in KiB on Linux
}

func httpBenchmark(_ arguments: [String]) async throws {
    let sizeMiB = Int(option("size-mib", in: arguments) ?? "") ?? 1024
    let requestCount = Int(option("requests", in: arguments) ?? "") ?? 2000
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("llvs-bench-http-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }

    // The mock keeps what it receives in a file and serves it back from there, both streamed.
    let stored = folder.appendingPathComponent("stored")
    let server = try MockHTTPServer { request in
        switch request.method {
        case "PUT":
            try? FileManager.default.removeItem(at: stored)
            if case .file(let url, _) = request.body {
                try? FileManager.default.moveItem(at: url, to: stored)
            } else {
                try? request.bodyData.write(to: stored)
            }
            return .empty(201)
        case "GET" where request.path == "/big":
            return .ranged(.file(stored, range: nil), size: Int64(sizeMiB) * 1024 * 1024, rangeHeader: nil)
        default:
            return .text(200, "ok")
        }
    }
    defer { server.stop() }
    let source = folder.appendingPathComponent("source")
    let back = folder.appendingPathComponent("back")
    // The source file is written in 1 MiB pieces, so making it does not raise the memory figure either.
    try Data().write(to: source)
    let handle = try FileHandle(forWritingTo: source)
    let piece = Data((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) })
    for _ in 0..<sizeMiB { handle.write(piece) }
    try handle.close()

    var configuration = HTTPClientConfiguration()
    configuration.maximumConnectionsPerHost = 8
    let http = HTTPClient(configuration: configuration)
    let before = peakResidentMiB()
    var start = DispatchTime.now().uptimeNanoseconds
    let put = try await http.send(
        HTTPRequest(method: "PUT", url: server.baseURL.appendingPathComponent("big"), body: .file(source)))
    let upload = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    guard put.status == 201 else { throw BenchmarkError("the upload answered \(put.status)") }
    start = DispatchTime.now().uptimeNanoseconds
    let get = try await http.send(
        HTTPRequest(url: server.baseURL.appendingPathComponent("big"), destination: .file(back)))
    let download = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    let size = (try FileManager.default.attributesOfItem(atPath: back.path)[.size] as? Int) ?? 0
    guard get.status == 200, size == sizeMiB << 20 else {
        throw BenchmarkError("the download answered \(get.status) with \(size) bytes")
    }
    let peak = peakResidentMiB()

    print("HTTP benchmark: HTTPClient (libcurl) against the mock server on loopback, in one process")
    print(
        String(format: "upload   %5d MiB from a file: %7.2f s  %7.1f MiB/s", sizeMiB, upload, Double(sizeMiB) / upload))
    print(
        String(
            format: "download %5d MiB to a file:   %7.2f s  %7.1f MiB/s", sizeMiB, download, Double(sizeMiB) / download)
    )
    print(
        String(
            format: "peak resident memory: %.1f MiB (%.1f MiB before the transfers; target under 64 MiB)", peak, before)
    )

    for concurrency in [1, 8] {
        let url = server.baseURL.appendingPathComponent("small")
        let begin = DispatchTime.now().uptimeNanoseconds
        try await withThrowingTaskGroup(of: Void.self) { group in
            var sent = 0
            for _ in 0..<concurrency {
                group.addTask { _ = try await http.send(HTTPRequest(url: url)) }
                sent += 1
            }
            while try await group.next() != nil, sent < requestCount {
                group.addTask { _ = try await http.send(HTTPRequest(url: url)) }
                sent += 1
            }
            try await group.waitForAll()
        }
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - begin) / 1e9
        print(
            String(
                format: "%d small GETs, %d at once: %6.2f s  %7.0f requests/s", requestCount, concurrency, seconds,
                Double(requestCount) / seconds))
    }

    // Answers held in memory: eight at once of a body larger than any limit (as a hostile server's endless ones),
    // each bounded on its own and all of them by the client's budget. The figure is the process's peak.
    let transfers = 8
    let memoryBefore = peakResidentMiB()
    let outcomes = await withTaskGroup(of: String.self) { group in
        for _ in 0..<transfers {
            group.addTask {
                do {
                    return
                        "\(try await http.send(HTTPRequest(url: server.baseURL.appendingPathComponent("big"))).body.count) bytes"
                } catch {
                    return "\(error)".contains("budget") || "\(error)".contains("past")
                        ? "over the budget" : "over its limit"
                }
            }
        }
        return await group.reduce(into: [String]()) { $0.append($1) }
    }
    let counts = Dictionary(outcomes.map { ($0, 1) }, uniquingKeysWith: +).map { "\($0.value) \($0.key)" }.sorted()
        .joined(separator: ", ")
    print(
        String(
            format:
                "%d answers of %d MiB to memory at once (%d MiB each at most, %d MiB for all): held at most %.1f MiB by the budget's count; peak resident %.1f MiB (%.1f before); ",
            transfers, sizeMiB, HTTPResponseDestination.defaultMemoryLimit >> 20,
            configuration.maximumBufferedBytes >> 20,
            Double(http.memoryBudget.highWaterMark) / 1_048_576, peakResidentMiB(), memoryBefore) + counts)
}
