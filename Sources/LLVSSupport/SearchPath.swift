import Foundation

/// Finds a program as a shell does: the first executable of that name in `$PATH`'s folders.
public enum SearchPath {
    public static func find(
        _ program: String, environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> URL? {
        let path = environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        return path.split(separator: ":").map { URL(fileURLWithPath: String($0)).appendingPathComponent(program) }
            .first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }
}
