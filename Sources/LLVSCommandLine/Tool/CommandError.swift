import LLVS
import LLVSRemoteStore
import LLVSCloudService
import LLVSSupport
import LLVSBackup
import LLVSEncryption

/// What a command can fail with, each with its exit code. Codes are documented in `llvs --help`.
enum CommandError: Error, CustomStringConvertible {
    /// Wrong or missing arguments (exit 2).
    case usage(String)
    /// A value, version, backup or remote that does not exist (exit 3); nothing else, so a script can tell "not
    /// there" from "went wrong".
    case notFound(String)
    /// Anything else, already phrased for the user (exit 1).
    case failed(String)

    var description: String {
        switch self {
        case .usage(let message), .notFound(let message), .failed(let message): message
        }
    }
}

/// Exit codes of `llvs`.
enum ExitCode: Int32, CaseIterable {
    case success = 0
    case failure = 1
    case usage = 2
    case notFound = 3
    case noStore = 4
    case corrupt = 5
    case conflict = 6
    case storeExists = 7

    var meaning: String {
        switch self {
        case .success: "success"
        case .failure: "the command failed (the message says why)"
        case .usage: "wrong arguments"
        case .notFound: "no such value, version, backup, path in a backup, remote or account"
        case .noStore: "no store at the path"
        case .storeExists: "a store is already there (init, clone)"
        case .corrupt: "a file of the store is damaged"
        case .conflict: "a merge left conflicts unresolved"
        }
    }

    static func of(_ error: any Error) -> ExitCode {
        switch error {
        case let error as CommandError:
            switch error {
            case .usage: return .usage
            case .notFound: return .notFound
            case .failed: return .failure
            }
        case let error as ConnectorKindError:
            switch error {
            case .usage: return .usage
            case .failed: return .failure
            }
        case let error as StoreError:
            switch error {
            case .notAStore: return .noStore
            case .alreadyAStore: return .storeExists
            case .corruptFile, .unsupportedStorage: return .corrupt
            case .versionNotFound, .valueReleased: return .notFound
            case .unresolvedConflicts: return .conflict
            case .database, .versionAlreadyExists, .missingPredecessor, .invalidChanges, .storeNotEmpty,
                .snapshotsUnsupported, .snapshotNeedsReleasedRecords, .sourceChanged,
                .valueTooLarge, .releaseUnsupported:
                return .failure
            }
        case let error as FileError:
            switch error {
            case .endedEarly: return .corrupt
            case .io, .changedWhileRead: return .failure
            }
        case let error as BackupError:
            switch error {
            case .damagedObject, .missingObject: return .corrupt
            case .unknownSource: return .notFound
            case .sourceNeeded: return .usage
            case .unreadable, .readFailed, .unwritable: return .failure
            }
        case let error as RemoteStoreError:
            switch error {
            case .damagedRange: return .corrupt
            case .emptyRemote: return .notFound
            case .readOnly: return .failure
            }
        case let error as EncryptionError:
            switch error {
            case .damaged: return .corrupt
            case .wrongPassphrase, .malformedKeyFile, .plaintextStore, .outsideEncryptedFolder, .keyDerivationFailed:
                return .failure
            }
        default: return .failure
        }
    }
}
