/// What can go wrong getting or keeping a token, each case saying what the user can do.
public enum OAuthError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The service no longer accepts the refresh token (`invalid_grant`), or there is none: authorize again.
    case reauthorizationRequired(command: String, reason: String)
    /// There is no token yet: the remote was never authorized (or its token file was removed).
    case notAuthorized(command: String, tokenFile: String)
    /// The token endpoint refused a request for another reason.
    case tokenEndpoint(status: Int, error: String, description: String)
    /// The redirect's `state` did not match: the answer is not for this request.
    case stateMismatch
    /// The user or the service declined the authorization.
    case authorizationDenied(String)
    case missingCode(String)
    /// A bare code was pasted for a service that does not bind codes to the attempt (no PKCE): the state must be checked.
    case wholeAddressNeeded
    /// The device code expired before the user approved it.
    case deviceCodeExpired
    case malformedToken(String)
    /// The token file could not be read, written or locked.
    case tokenFile(path: String, message: String)

    public var description: String {
        switch self {
        case .reauthorizationRequired(let command, let reason):
            "The saved authorization no longer works (\(reason)). Run `\(command)` to authorize again."
        case .notAuthorized(let command, let tokenFile):
            "This remote is not authorized yet (there is no token at \(tokenFile)). Run `\(command)` first."
        case .tokenEndpoint(let status, let error, let description):
            "The token endpoint refused the request (\(status) \(error)): \(description)"
        case .stateMismatch: "The authorization answer does not belong to this request (state mismatch); start again."
        case .authorizationDenied(let reason): "The authorization was declined: \(reason)."
        case .missingCode(let text): "No authorization code in \(text)."
        case .wholeAddressNeeded:
            "Paste the whole address the browser ended at, not only the code: this service does not bind a code to the request that asked for it, so its state must be checked."
        case .deviceCodeExpired: "The device code expired before it was approved; start again."
        case .malformedToken(let reason): "The token is not usable: \(reason)."
        case .tokenFile(let path, let message): "The token file \(path) failed: \(message)."
        }
    }
}
