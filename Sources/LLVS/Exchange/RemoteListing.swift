import Foundation
import LLVSSupport

/// What a sync learned of the remote before moving anything: the versions it holds and, where the remote has a
/// change feed, the feed position that knowledge is valid at (saved once the sync is done).
public struct RemoteListing: Sendable {
    /// How the versions were learned.
    public enum Source: Sendable, Equatable {
        /// The whole `versions/` folder was listed (no feed, or the first sync with this remote).
        case fullListing
        /// The saved position and the feed's changes since it: one request when nothing is new.
        case changeFeed
        /// The saved position was refused (too old, reset by the service, a watched folder replaced): listed in full.
        case fullListingAfterExpiredCursor(String)
    }

    /// The versions the remote holds.
    public var versionIds: Set<Version.ID>
    /// How they were learned.
    public var source: Source
    /// The feed position to save with `versionIds` once the sync is done; nil where there is no feed.
    public var cursor: String?

    public init(versionIds: Set<Version.ID>, source: Source = .fullListing, cursor: String? = nil) {
        self.versionIds = versionIds
        self.source = source
        self.cursor = cursor
    }
}
