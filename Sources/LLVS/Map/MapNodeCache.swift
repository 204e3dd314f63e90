import LLVSSupport
import Synchronization

/// Decoded map nodes by location. Nodes never change once written, so the cache needs no invalidation.
///
/// Bounded by two generations of at most `limit` nodes: when the current one fills, it becomes the previous one and
/// the older previous one goes; a node found in the previous generation moves back into the current one. So the
/// nodes still in use (the current map's, which every save reads and rewrites) outlive a turnover, and only nodes
/// not used for a whole generation are dropped. A cache that started over when full would make an import's staging
/// store read and decode again, after every turnover, the whole current map it had just dropped.
final class MapNodeCache: Sendable {
    private struct Generations {
        var current: [RecordLocation: MapNode] = [:]
        var previous: [RecordLocation: MapNode] = [:]
    }

    private let nodes = Mutex(Generations())
    private let limit: Int

    static let defaultLimit = 200_000

    init(limit: Int = defaultLimit) { self.limit = max(1, limit) }

    subscript(location: RecordLocation) -> MapNode? {
        nodes.withLock { nodes in
            if let node = nodes.current[location] { return node }
            guard let node = nodes.previous[location] else { return nil }
            insert(node, at: location, into: &nodes)
            return node
        }
    }

    /// How many nodes are held (both generations; a promoted node counts twice).
    var count: Int { nodes.withLock { $0.current.count + $0.previous.count } }

    func insert(_ node: MapNode, at location: RecordLocation) {
        nodes.withLock { insert(node, at: location, into: &$0) }
    }

    private func insert(_ node: MapNode, at location: RecordLocation, into nodes: inout Generations) {
        if nodes.current.count >= limit {
            swap(&nodes.current, &nodes.previous)
            nodes.current.removeAll(keepingCapacity: true)
        }
        nodes.current[location] = node
    }
}
