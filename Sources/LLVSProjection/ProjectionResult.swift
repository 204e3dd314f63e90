import LLVS

/// What one projection pass did.
public struct ProjectionResult: Sendable, Equatable {
    /// The version the tables now reflect.
    public var versionId: Version.ID?
    /// Whether the pass dropped the tables and projected every value (a new schema version, a lost database).
    public var rebuilt = false
    /// Rows written (inserted or replaced) and rows removed.
    public var rowsWritten = 0
    public var rowsRemoved = 0
    /// Values whose `extract` threw, left out of the tables: the first `ProjectionResult.unreadableIdLimit` IDs, and
    /// the exact count.
    public var unreadableIds: [Value.ID] = []
    public var unreadableCount = 0

    public static let unreadableIdLimit = 100

    public init(versionId: Version.ID?) { self.versionId = versionId }

    mutating func recordUnreadable(_ id: Value.ID) {
        unreadableCount += 1
        if unreadableIds.count < Self.unreadableIdLimit { unreadableIds.append(id) }
    }
}
