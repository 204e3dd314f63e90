/// The options each benchmark command takes, checked before anything runs, as `llvs` checks its own: an option the
/// command does not take, a missing value, a bad number or a value outside its list ends the run with a message and
/// exit code 2, never a silently used default. (The commands then read the checked values with `option(_:in:)`.)
struct BenchOptions {
    enum Kind {
        /// A whole number of at least 1.
        case count
        /// Comma-separated counts, each within `range`.
        case counts(ClosedRange<Int>)
        /// Comma-separated words from a list.
        case words(Set<String>)
        /// Any text (a path).
        case text
        /// No value.
        case flag
    }

    var options: [String: Kind]

    static let commands: [String: BenchOptions] = [
        "store": BenchOptions(options: [
            "sizes": .counts(1...Int.max), "saves": .count, "reads": .count, "storages": .words(["file", "sqlite"]),
        ]),
        "sync": BenchOptions(options: ["versions": .counts(1...Int.max), "runs": .count, "keep-remote": .text]),
        "http": BenchOptions(options: ["size-mib": .count, "requests": .count]),
        "restore": BenchOptions(options: [
            "snapshot": .text, "format": .words(["zip-v1", "llvs-bundles-v1"]), "versions": .count, "runs": .count,
        ]),
        "encryption": BenchOptions(options: ["files": .count, "size-mib": .count, "runs": .count]),
        "repository": BenchOptions(options: ["runs": .count, "work": .text]),
        "s3": BenchOptions(options: ["runs": .count, "work": .text, "moto": .text]),
        "sftp": BenchOptions(options: ["runs": .count, "work": .text]),
        "retention": BenchOptions(options: ["rounds": .count, "keep": .count, "work": .text]),
        "mount": BenchOptions(options: ["size-mib": .count, "files": .count, "work": .text]),
        "models": BenchOptions(options: ["models": .count, "rows": .count, "runs": .count]),
        "listing": BenchOptions(options: ["entries": .count, "runs": .count, "remote": .words(["webdav", "gdrive"])]),
        "compare": BenchOptions(options: [
            "runs": .count, "rows": .counts(1...17),
            "remotes": .words(["webdav", "gdrive", "onedrive", "pcloud", "box"]), "files": .count,
            "versions": .count, "size-mib": .count, "backup-files": .count, "clone-versions": .count,
            "restic-files": .count,
            "scale-files": .counts(1...Int.max), "kill-size-mib": .count, "rclone": .text, "install-rclone": .flag,
        ]),
    ]

    struct Invalid: Error, CustomStringConvertible {
        var description: String
    }

    /// Checks a command's words; the message names the option and what it takes.
    func check(_ words: [String]) throws {
        var index = 0
        while index < words.count {
            let word = words[index]
            index += 1
            guard word.hasPrefix("--") else { throw Invalid(description: "unexpected argument \(word)") }
            let name = String(word.dropFirst(2))
            guard let kind = options[name] else {
                throw Invalid(
                    description: "unknown option \(word); this command takes "
                        + options.keys.sorted().map { "--" + $0 }.joined(separator: ", "))
            }
            if case .flag = kind { continue }
            guard index < words.count, !words[index].hasPrefix("--") else {
                throw Invalid(description: "\(word) needs a value")
            }
            let value = words[index]
            index += 1
            switch kind {
            case .count:
                guard let number = Int(value), number >= 1 else {
                    throw Invalid(description: "\(word) needs a whole number of at least 1, not \(value)")
                }
            case .counts(let range):
                for part in value.split(separator: ",", omittingEmptySubsequences: false) {
                    guard let number = Int(part), range.contains(number) else {
                        let bounds =
                            range.upperBound == Int.max
                            ? "at least \(range.lowerBound)" : "from \(range.lowerBound) to \(range.upperBound)"
                        throw Invalid(
                            description: "\(word) needs comma-separated whole numbers \(bounds), not \(value)")
                    }
                }
            case .words(let allowed):
                for part in value.split(separator: ",", omittingEmptySubsequences: false)
                where !allowed.contains(String(part)) {
                    throw Invalid(
                        description: "\(word) takes " + allowed.sorted().joined(separator: ", ") + ", not \(part)")
                }
            case .text, .flag:
                break
            }
        }
    }
}
