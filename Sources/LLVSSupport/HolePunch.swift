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
    /// ends are zeroed. A file system that cannot (some network ones) fails with its errno, named.
    package static func punchHole(_ fd: Int32, offset: Int64, length: Int64, path: String) throws {
        guard let fallocate else {
            throw FileError.io(path: path, operation: "free a range (this C library has no fallocate)", errno: ENOSYS)
        }
        guard fallocate(fd, punchHoleKeepingSize, offset, length) == 0 else {
            throw FileError.io(path: path, operation: "free a range (fallocate)", errno: errno)
        }
    }
}
