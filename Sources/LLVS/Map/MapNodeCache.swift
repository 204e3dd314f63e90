import Synchronization

/// Decoded map nodes by location. Nodes never change once written, so the cache needs no invalidation;
/// it is bounded and simply starts over when full.
final class MapNodeCache: Sendable {
    private let nodes = Mutex<[RecordLocation: MapNode]>([:])
    private let limit: Int

    static let defaultLimit = 200_000

    init(limit: Int = defaultLimit) { self.limit = limit }

    subscript(location: RecordLocation) -> MapNode? {
        nodes.withLock { $0[location] }
    }

    func insert(_ node: MapNode, at location: RecordLocation) {
        nodes.withLock { nodes in
            if nodes.count >= limit { nodes.removeAll(keepingCapacity: true) }
            nodes[location] = node
        }
    }
}
