import LLVSSupport
extension Value {
    /// How a value changed on the two sides of a merge, relative to their common ancestor.
    public enum Fork: Hashable, Sendable {
        /// One side of a merge.
        public enum Side: Hashable, Sendable {
            case first, second
            /// The other side.
            public var opposite: Side { self == .first ? .second : .first }
        }

        case inserted(Side)
        case updated(Side)
        case removed(Side)
        case twiceRemoved
        /// Conflicts: both sides changed the value in different ways.
        case twiceInserted
        case twiceUpdated
        case removedAndUpdated(removedOn: Side)

        /// True for the forks an arbiter must resolve.
        public var isConflicting: Bool {
            switch self {
            case .twiceInserted, .twiceUpdated, .removedAndUpdated: true
            case .inserted, .updated, .removed, .twiceRemoved: false
            }
        }
    }
}
