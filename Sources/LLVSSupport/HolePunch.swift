import Foundation
#if canImport(Glibc)
import Glibc
#endif

extension POSIX {
    // glibc has fallocate, but its header declares it only for _GNU_SOURCE, which Swift's Glibc module is not built
    // with: it is looked up by name.
    private typealias Fallocate = @convention(c) (Int32, Int32, Int64, Int64) -> Int32
    private static let fallocate: Fallocate? = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "fallocate")
        .map { unsafeBitCast($0, to: Fallocate.self) }
    /// `FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE`: free a range's blocks and keep the file's size.
    private static let punchHoleKeepingSize: Int32 = 0x02 | 0x01

    /// Frees the blocks of `length` bytes from `offset` in the open file `fd` (the range then reads as zeros), keeping
    /// its size and every other byte where it is. Whole blocks inside the range are freed; the partial blocks at its
    /// ends are zeroed. On a file system that cannot punch holes the range is overwritten with zeros instead: the
    /// bytes are gone all the same, their blocks are not freed. Returns whether the blocks were freed.
    @discardableResult
    package static func punchHole(_ fd: Int32, offset: Int64, length: Int64, path: String) throws -> Bool {
        if let fallocate {
            if fallocate(fd, punchHoleKeepingSize, offset, length) == 0 { return true }
            guard errno == EOPNOTSUPP || errno == ENOSYS else {
                throw FileError.io(path: path, operation: "free a range (fallocate)", errno: errno)
            }
        }
        let zeros = [UInt8](repeating: 0, count: 1 << 20)
        var done: Int64 = 0
        while done < length {
            let count = Int(min(Int64(zeros.count), length - done))
            try zeros.withUnsafeBytes {
                try write(UnsafeRawBufferPointer(rebasing: $0[..<count]), at: offset + done, to: fd, path: path)
            }
            done += Int64(count)
        }
        return false
    }
}
