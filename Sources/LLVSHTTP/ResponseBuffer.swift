import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// An answer's body held in memory, in one block. A small body lives on the heap; from 1 MiB on, the block is pages
/// of its own (`mmap`), given back to the system the moment it is freed. Growing one copies into a new block before
/// the old one goes, and the caller charges the budget for both while that happens (`growthCharge`), so what the
/// client's budget counts is what the process holds. Bodies grown by appending to `Data` live in heap blocks that
/// glibc keeps after they are freed (once its mmap threshold has risen after a first large free), so eight answers
/// growing at once held a hundred MiB more than the budget counted.
final class ResponseBuffer {
    private var pointer: UnsafeMutableRawPointer?
    private var mapped = false
    private(set) var count = 0
    private(set) var capacity = 0

    /// From this capacity on, the block is pages of its own.
    static let mappedFrom = 1 << 20

    deinit { release() }

    /// The capacity to grow to for `extra` more bytes: half as much again each time (at least 256 KiB), never past
    /// `limit` (beyond which the answer is refused anyway), and always enough for them.
    func capacity(toHold extra: Int, limit: Int) -> Int {
        let needed = count + extra
        guard needed > capacity else { return capacity }
        return max(needed, min(limit, capacity + max(capacity / 2, 256 << 10)))
    }

    /// Grows the block to `newCapacity` bytes; false when the system has no memory for it.
    func grow(to newCapacity: Int) -> Bool {
        guard newCapacity > capacity else { return true }
        if newCapacity < Self.mappedFrom {
            guard let grown = realloc(pointer, newCapacity) else { return false }
            pointer = grown
        } else {
            let block = mmap(nil, Self.pages(newCapacity), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
            guard block != MAP_FAILED, let block else { return false }
            if let old = pointer {
                block.copyMemory(from: old, byteCount: count)
                if mapped { munmap(old, Self.pages(capacity)) } else { free(old) }
            }
            pointer = block
            mapped = true
        }
        capacity = newCapacity
        return true
    }

    /// Appends bytes the capacity already holds room for.
    func append(_ bytes: UnsafeRawPointer, count added: Int) {
        precondition(count + added <= capacity, "grow first")
        pointer!.advanced(by: count).copyMemory(from: bytes, byteCount: added)
        count += added
    }

    /// Empties the buffer and gives its block back (a new set of headers begins a new body).
    func reset() {
        release()
        pointer = nil
        mapped = false
        count = 0
        capacity = 0
    }

    /// The bytes as `Data`, handed over without a copy; the buffer is empty after.
    func take() -> Data {
        guard let block = pointer, count > 0 else { reset(); return Data() }
        let data: Data
        if mapped {
            let length = Self.pages(capacity)
            data = Data(
                bytesNoCopy: block, count: count, deallocator: .custom { pointer, _ in munmap(pointer, length) })
        } else {
            data = Data(bytesNoCopy: block, count: count, deallocator: .free)
        }
        pointer = nil
        mapped = false
        count = 0
        capacity = 0
        return data
    }

    private func release() {
        guard let block = pointer else { return }
        if mapped { munmap(block, Self.pages(capacity)) } else { free(block) }
    }

    private static let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))

    /// `bytes` rounded up to whole pages.
    private static func pages(_ bytes: Int) -> Int { (bytes + pageSize - 1) / pageSize * pageSize }
}
