import Foundation
import LLVS
import LLVSHTTP

/// Where a remote's keys come from, in the order the AWS tools look: the account's own (`--access-key-id` and the
/// secret kept with it), then `$AWS_ACCESS_KEY_ID` and `$AWS_SECRET_ACCESS_KEY` (with `$AWS_SESSION_TOKEN`), then
/// the profile `$AWS_PROFILE` (else `default`) of the shared credentials file (`$AWS_SHARED_CREDENTIALS_FILE`, else
/// `~/.aws/credentials`).
public struct S3Credentials: Sendable, Equatable {
    public var accessKeyID: String
    public var secretAccessKey: String
    public var sessionToken: String?

    public init(accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil) {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
    }

    public enum Failure: Error, CustomStringConvertible {
        case none(profile: String, file: String)
        case incompleteProfile(profile: String, file: String)

        public var description: String {
            switch self {
            case .none(let profile, let file):
                "no S3 keys: give the account --access-key-id and --secret-access-key-stdin, set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or add the profile [\(profile)] to \(file)"
            case .incompleteProfile(let profile, let file):
                "the profile [\(profile)] of \(file) lacks aws_access_key_id or aws_secret_access_key"
            }
        }
    }

    /// The keys to sign with; throws when there are none anywhere.
    public static func resolve(
        accessKeyID: String?, secret: String?, environment: [String: String], home: String
    ) throws -> S3Credentials {
        if let accessKeyID, !accessKeyID.isEmpty, let secret, !secret.isEmpty {
            return S3Credentials(accessKeyID: accessKeyID, secretAccessKey: secret)
        }
        if let id = environment["AWS_ACCESS_KEY_ID"], !id.isEmpty, let key = environment["AWS_SECRET_ACCESS_KEY"],
            !key.isEmpty
        {
            return S3Credentials(
                accessKeyID: id, secretAccessKey: key,
                sessionToken: environment["AWS_SESSION_TOKEN"].flatMap {
                    $0.isEmpty ? nil : $0
                })
        }
        let profile = environment["AWS_PROFILE"].flatMap { $0.isEmpty ? nil : $0 } ?? "default"
        let file =
            environment["AWS_SHARED_CREDENTIALS_FILE"].flatMap { $0.isEmpty ? nil : $0 }
            ?? home + "/.aws/credentials"
        guard let text = try? String(contentsOfFile: file, encoding: .utf8),
            let section = profileSection(text, named: profile)
        else { throw Failure.none(profile: profile, file: file) }
        guard let id = section["aws_access_key_id"], let key = section["aws_secret_access_key"] else {
            throw Failure.incompleteProfile(profile: profile, file: file)
        }
        return S3Credentials(accessKeyID: id, secretAccessKey: key, sessionToken: section["aws_session_token"])
    }

    /// The `key = value` lines of one `[profile]` section of an INI file (comments `#` and `;` skipped).
    static func profileSection(_ text: String, named name: String) -> [String: String]? {
        var current: String?
        var found: [String: String]?
        for rawLine in text.split(whereSeparator: \.isNewline) {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            if line.hasPrefix("["), line.hasSuffix("]") {
                current = String(line.dropFirst().dropLast()).trimmingCharacters(in: .whitespaces)
                if current == name, found == nil { found = [:] }
                continue
            }
            guard current == name, let equals = line.firstIndex(of: "=") else { continue }
            let key = line[..<equals].trimmingCharacters(in: .whitespaces).lowercased()
            found?[key] = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
        }
        return found
    }

    /// The signer for a region.
    public func signer(region: String) -> SigV4 {
        SigV4(accessKeyID: accessKeyID, secretAccessKey: secretAccessKey, sessionToken: sessionToken, region: region)
    }
}
