import Foundation

/// An option a kind of remote takes (`--scope`, `--drive-id`), declared once with its help, value type and allowed
/// values, so `llvs remote add` can parse, check and document it without knowing the kind.
public struct ConnectorOption: Sendable {
    /// Where the value is kept. An account option is part of the sign-in (the OAuth client, the service's address,
    /// what the token may touch) and is shared by every remote on the account; a remote option says where and how one
    /// store's files are kept.
    public enum Level: Sendable { case account, remote }

    /// What a value must look like.
    public enum ValueType: Sendable {
        case text
        case number(ClosedRange<Int>)
        /// An http:// or https:// URL with a host.
        case httpURL
        case choice([String])
    }

    public var name: String
    public var valueName: String
    public var help: String
    public var level: Level
    public var type: ValueType
    /// What the option means when it is not given; values equal to it count as the same when an existing account is
    /// compared with a new remote's options.
    public var defaultValue: String?

    public init(
        _ name: String, _ valueName: String, _ help: String, level: Level, type: ValueType = .text,
        defaultValue: String? = nil
    ) {
        self.name = name
        self.valueName = valueName
        self.help = help
        self.level = level
        self.type = type
        self.defaultValue = defaultValue
    }

    /// The environment variable that gives this option of `kind` (account options only): `LLVS_ONEDRIVE_CLIENT_ID`.
    public func environmentName(kind: String) -> String {
        ConnectorKind.environmentPrefix(kind) + name.uppercased().replacingOccurrences(of: "-", with: "_")
    }

    /// Checks a value, with an error that names the option, the kind, the bad value and what is allowed.
    public func check(_ value: String, kind: ConnectorKind) throws {
        let problem: String?
        switch type {
        case .text:
            problem = value.isEmpty || value.contains(where: \.isNewline) ? "a non-empty line of text" : nil
        case .number(let range):
            problem =
                Int(value).map(range.contains) == true
                ? nil : "a whole number from \(range.lowerBound) to \(range.upperBound)"
        case .httpURL:
            let url = URL(string: value)
            problem =
                url.map { ["http", "https"].contains($0.scheme?.lowercased() ?? "") && $0.host != nil } == true
                ? nil : "an http:// or https:// URL"
        case .choice(let allowed):
            problem = allowed.contains(value) ? nil : allowed.joined(separator: " or ")
        }
        if let problem {
            throw ConnectorKindError.usage(
                "--\(name) of a \(kind.serviceName) remote (\(kind.name):) is \(problem), not '\(value)'")
        }
    }

    /// What help shows after the option's text: the allowed values and the default.
    public var helpSuffix: String {
        var parts: [String] = []
        if case .choice(let allowed) = type { parts.append(allowed.joined(separator: "|")) }
        if case .number(let range) = type { parts.append("\(range.lowerBound)…\(range.upperBound)") }
        if let defaultValue { parts.append("default \(defaultValue)") }
        return parts.isEmpty ? "" : " [" + parts.joined(separator: "; ") + "]"
    }
}

/// A secret an account keeps (a WebDAV password, an OAuth client secret): read from standard input with
/// `--NAME-stdin` into the account's private file, or from `LLVS_<KIND>_<NAME>` at run time; never on a command line.
public struct ConnectorSecret: Sendable {
    public var name: String
    public var help: String
    /// Whether an account of this kind is unusable without it (pCloud's and Box's token endpoints require a secret).
    public var required: Bool

    public init(_ name: String, _ help: String, required: Bool) {
        self.name = name
        self.help = help
        self.required = required
    }

    public var optionName: String { name + "-stdin" }

    public func environmentName(kind: String) -> String {
        ConnectorKind.environmentPrefix(kind) + name.uppercased().replacingOccurrences(of: "-", with: "_")
    }
}
