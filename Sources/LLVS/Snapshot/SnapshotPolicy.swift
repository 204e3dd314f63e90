import Foundation
import LLVSSupport

/// When a coordinator takes a snapshot after an exchange. Disabled by default; `automatic` takes one when both
/// enough time and enough new versions have passed since the remote's last snapshot (LLVS's 7 days and 20 versions).
public struct SnapshotPolicy: Sendable, Equatable {
    /// Whether exchanges take snapshots at all.
    public var isEnabled: Bool
    /// How long after the last snapshot the next may be taken.
    public var minimumInterval: TimeInterval
    /// How many versions must have been made since the last snapshot.
    public var minimumNewVersions: Int

    public init(isEnabled: Bool, minimumInterval: TimeInterval = 7 * 24 * 3600, minimumNewVersions: Int = 20) {
        self.isEnabled = isEnabled
        self.minimumInterval = minimumInterval
        self.minimumNewVersions = minimumNewVersions
    }

    /// Never take a snapshot.
    public static let disabled = SnapshotPolicy(isEnabled: false)
    /// Take one when a week and 20 versions have passed since the last.
    public static let automatic = SnapshotPolicy(isEnabled: true)

    /// True when a snapshot is due given the remote's last one (nil: none yet) and the store's version count.
    public func isDue(lastSnapshot: SnapshotManifest?, versionCount: Int, now: Date) -> Bool {
        guard isEnabled else { return false }
        guard let last = lastSnapshot else { return versionCount >= minimumNewVersions }
        let elapsed = now.timeIntervalSinceReferenceDate - last.createdAt
        return elapsed >= minimumInterval && versionCount - last.versionCount >= minimumNewVersions
    }
}
