import Foundation
import LLVSSupport
import Synchronization

/// pCloud's sign-in by user name and password, beside OAuth: what rclone's `cleanup` and the `pcloud` library use.
/// Any method takes `username` with `password` (plain) or with `digest` and `passworddigest` (SHA-1 of the password,
/// the hex SHA-1 of the lower-cased user name and a digest from `getdigest`, which serves once); with `getauth=1` the
/// answer carries an `auth` token that later calls give as `auth`, until `logout`. A wrong password, an unknown or
/// spent digest, or an `auth` that was logged out is 2000 "Log in failed.".
final class MockPCloudPasswordSignIn: Sendable {
    let username: String
    let password: String
    private struct Sessions {
        var digests: Set<String> = []
        var tokens: Set<String> = []
    }
    private let sessions = Mutex(Sessions())

    init(username: String, password: String) {
        self.username = username
        self.password = password
    }

    /// What a call's credentials come to.
    enum Outcome {
        /// None given: the caller tries its other ways (an OAuth token), or says a log in is required.
        case none
        /// Signed in; `issued` is the new `auth` token when the call asked for one with `getauth`.
        case signedIn(issued: String?)
        case failed
    }

    /// `getdigest`: a digest for one password digest, in pCloud's envelope.
    func digestAnswer() -> [String: Any] {
        let digest = ChecksumAlgorithm.sha1.text(of: Data(UUID().uuidString.utf8))
        sessions.withLock { _ = $0.digests.insert(digest) }
        let expires = Date().addingTimeInterval(30)
        return [
            "result": 0, "digest": digest, "expires": HTTPDate.format(expires),
            "expires_ts": Int(expires.timeIntervalSince1970),
        ]
    }

    /// Reads the credentials of a call's parameters.
    func check(_ parameters: [String: String]) -> Outcome {
        if let auth = parameters["auth"] {
            return sessions.withLock { $0.tokens.contains(auth) } ? .signedIn(issued: nil) : .failed
        }
        guard let given = parameters["username"] else { return .none }
        guard given.lowercased() == username.lowercased() else { return .failed }
        if let plain = parameters["password"] {
            guard plain == password else { return .failed }
        } else {
            guard let digest = parameters["digest"], let passwordDigest = parameters["passworddigest"],
                sessions.withLock({ $0.digests.remove(digest) != nil })
            else { return .failed }
            let nameDigest = ChecksumAlgorithm.sha1.text(of: Data(given.lowercased().utf8))
            guard
                passwordDigest.lowercased()
                    == ChecksumAlgorithm.sha1.text(of: Data((password + nameDigest + digest).utf8))
            else { return .failed }
        }
        guard let wanted = parameters["getauth"], !["", "0"].contains(wanted) else { return .signedIn(issued: nil) }
        let token = ChecksumAlgorithm.sha1.text(of: Data(UUID().uuidString.utf8))
        sessions.withLock { _ = $0.tokens.insert(token) }
        return .signedIn(issued: token)
    }

    /// `logout`: the `auth` token given stops working.
    func logout(_ parameters: [String: String]) -> [String: Any] {
        let deleted = parameters["auth"].map { token in sessions.withLock { $0.tokens.remove(token) != nil } } ?? false
        return ["result": 0, "auth_deleted": deleted]
    }
}
