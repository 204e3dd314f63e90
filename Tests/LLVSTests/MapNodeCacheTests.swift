import Foundation
import Testing
@testable import LLVS

/// The map node cache keeps what is in use across turnovers and stays within two generations of its limit.
@Suite struct MapNodeCacheTests {
    func location(_ index: Int) -> RecordLocation {
        RecordLocation(versionId: Version.ID("V\(index)"), offset: Int64(index), length: 1)
    }

    @Test func aNodeInUseOutlivesTurnoversAndAnUnusedOneGoes() {
        let cache = MapNodeCache(limit: 10)
        let root = location(-1)
        cache.insert(.leaf([]), at: root)
        cache.insert(.leaf([]), at: location(-2))
        for index in 0..<200 {
            cache.insert(.branch([]), at: location(index))
            // Read as every save reads the current root.
            #expect(cache[root] != nil, "the root was dropped at \(index)")
            #expect(cache.count <= 20)
        }
        #expect(cache[location(-2)] == nil)
        #expect(cache[location(199)] != nil)
        #expect(cache[location(150)] == nil)
    }
}
