import Foundation

/// The records read last, up to a number of bytes, the least recently used given up first: what a mount from a
/// remote reads twice (a file read again, the same chunk in two backups) is fetched once, in bounded memory.
struct RecordCache<Key: Hashable> {
    private struct Entry {
        var key: Key
        var value: Data
        var newer: Int?
        var older: Int?
    }

    /// The most bytes held; a record larger than this is never held.
    let limit: Int
    private(set) var bytes = 0
    private var slots: [Entry?] = []
    private var freeSlots: [Int] = []
    private var slotOfKey: [Key: Int] = [:]
    private var newest: Int?
    private var oldest: Int?

    init(limit: Int) { self.limit = limit }

    /// Whether the record is held, without making it the most recently used.
    func contains(_ key: Key) -> Bool { slotOfKey[key] != nil }

    /// The record, which becomes the most recently used.
    mutating func value(for key: Key) -> Data? {
        guard let slot = slotOfKey[key], let entry = slots[slot] else { return nil }
        unlink(slot)
        linkAsNewest(slot)
        return entry.value
    }

    mutating func insert(_ value: Data, for key: Key) {
        guard value.count <= limit else { return }
        if let slot = slotOfKey[key] {
            bytes -= slots[slot]?.value.count ?? 0
            unlink(slot)
            freeSlot(slot, key: key)
        }
        let entry = Entry(key: key, value: value, newer: nil, older: nil)
        let slot: Int
        if let free = freeSlots.popLast() {
            slot = free
            slots[slot] = entry
        } else {
            slot = slots.count
            slots.append(entry)
        }
        slotOfKey[key] = slot
        bytes += value.count
        linkAsNewest(slot)
        while bytes > limit, let victim = oldest, let entry = slots[victim] {
            bytes -= entry.value.count
            unlink(victim)
            freeSlot(victim, key: entry.key)
        }
    }

    private mutating func freeSlot(_ slot: Int, key: Key) {
        slots[slot] = nil
        slotOfKey[key] = nil
        freeSlots.append(slot)
    }

    private mutating func unlink(_ slot: Int) {
        guard let entry = slots[slot] else { return }
        if let newer = entry.newer { slots[newer]?.older = entry.older } else { newest = entry.older }
        if let older = entry.older { slots[older]?.newer = entry.newer } else { oldest = entry.newer }
        slots[slot]?.newer = nil
        slots[slot]?.older = nil
    }

    private mutating func linkAsNewest(_ slot: Int) {
        slots[slot]?.older = newest
        slots[slot]?.newer = nil
        if let newest { slots[newest]?.newer = slot }
        newest = slot
        if oldest == nil { oldest = slot }
    }
}
