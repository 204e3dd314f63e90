import CCurl
import Foundation
import LLVS

/// A failure libcurl reports in words the file system looks into before it can say what it means: SFTP version 3
/// answers most refusals with a bare "failure", so a rename onto an existing name, a removal of a folder as a file and
/// a read of a folder all look alike until the path is looked at.
struct SFTPAmbiguousFailure: Error, Equatable {
    enum Kind: Equatable {
        /// A quote command (mkdir, rename, rm, rmdir) failed.
        case quote
        /// The SFTP operation itself failed.
        case operation
        /// A range that starts past the end of the file.
        case rangeOutside
    }

    var kind: Kind
    var message: String

    /// What it becomes where no look settles it.
    func settled(path: String) -> CloudFileSystemError {
        switch kind {
        case .rangeOutside: .server(status: 416, message: "\(message) (\(path))")
        case .quote, .operation: .server(status: 500, message: "the SFTP server failed on \(path): \(message)")
        }
    }
}

/// libcurl's result codes for SFTP in the shared vocabulary (`CloudFileSystemError`), with `SFTPError` for what stops
/// a connection before any file is touched.
enum SFTPFailureMapping {
    static func failure(
        _ code: CURLcode, transfer: SFTPTransfer, configuration: SFTPConfiguration, path: String
    ) -> any Error {
        let message = transfer.message(code)
        if let note = transfer.localFailure {
            switch note {
            case .tooLargeForMemory(let limit): return CloudFileSystemError.tooLargeForMemory(path: path, limit: limit)
            case .localFile(let file, let message): return CloudFileSystemError.localFile(path: file, message: message)
            case .regionOverrun(let length):
                return CloudFileSystemError.sizeMismatch(path: path, expected: length, received: transfer.written)
            }
        }
        if code == CURLE_ABORTED_BY_CALLBACK, transfer.isCancelled { return CancellationError() }
        let host = configuration.knownHostsName
        switch code {
        case CURLE_PEER_FAILED_VERIFICATION:
            switch transfer.hostKeyVerdict {
            case .unknown(let key):
                return SFTPError.unknownHostKey(
                    host: host, keyType: key.type, fingerprint: key.fingerprint,
                    knownHostsFile: configuration.knownHostsFile)
            case .changed(let key):
                return SFTPError.changedHostKey(
                    host: host, keyType: key.type, fingerprint: key.fingerprint,
                    knownHostsFile: configuration.knownHostsFile)
            case .accepted:
                return CloudFileSystemError.server(status: 495, message: "the SSH server's key failed: \(message)")
            }
        case CURLE_LOGIN_DENIED:
            var tried = [configuration.identityFile.map { "the key \($0)" } ?? "the usual keys and the SSH agent"]
            if configuration.password != nil { tried.append("the password") }
            return SFTPError.signInRefused(user: configuration.user, host: host, tried: tried.joined(separator: ", "))
        case CURLE_REMOTE_FILE_NOT_FOUND:
            return CloudFileSystemError.notFound(path: path)
        case CURLE_REMOTE_ACCESS_DENIED:
            return CloudFileSystemError.server(
                status: 403, message: "the SFTP server refused access to \(path): \(message)")
        case CURLE_REMOTE_DISK_FULL:
            return CloudFileSystemError.quotaExceeded("the SFTP server has no room for \(path): \(message)")
        case CURLE_QUOTE_ERROR:
            return SFTPAmbiguousFailure(kind: .quote, message: message)
        case CURLE_BAD_DOWNLOAD_RESUME:
            return SFTPAmbiguousFailure(kind: .rangeOutside, message: message)
        case CURLE_COULDNT_RESOLVE_HOST:
            return CloudFileSystemError.server(
                status: 502, message: "the SFTP server's name cannot be found: \(message)")
        case CURLE_COULDNT_CONNECT, CURLE_OPERATION_TIMEDOUT, CURLE_GOT_NOTHING, CURLE_SEND_ERROR, CURLE_RECV_ERROR,
            CURLE_PARTIAL_FILE, CURLE_AGAIN:
            return CloudFileSystemError.transient("SFTP to \(host) for \(path): \(message)")
        case CURLE_SSH where SFTPFailureMapping.isSessionFailure(message):
            return CloudFileSystemError.transient("SFTP to \(host) for \(path): \(message)")
        default:
            return SFTPAmbiguousFailure(kind: .operation, message: message)
        }
    }

    /// libcurl says CURLE_SSH both for an SFTP status ("Operation failed", "Upload failed: Permission denied (3/-31)")
    /// and for the SSH session breaking under it ("Upload failed: ssh error (0/-43)": no SFTP status, a libssh2
    /// socket error, or "Unknown error in libssh2" where libcurl asked for an SFTP status the dead session never sent);
    /// the second is worth another try on a new connection.
    static func isSessionFailure(_ message: String) -> Bool {
        let lowered = message.lowercased()
        if lowered.contains("ssh error (0/-") || lowered.contains("unknown error in libssh2") { return true }
        return ["socket", "session", "channel", "connection", "transport", "timeout", "timed out", "eof"].contains {
            lowered.contains($0)
        } && !lowered.contains("permission")
    }
}
