import LLVS

extension CloudFileSystemError {
    /// The folder an operation went into is not there (any more): `notFound` from a request addressed to it, or
    /// `parentMissing` where the service says so in its own words. What `IDPathCache.intoFolder` and
    /// `KnownFolders.intoFolder` answer by finding or making the folder again.
    public var isMissingFolder: Bool {
        switch self {
        case .notFound, .parentMissing: true
        default: false
        }
    }
}
