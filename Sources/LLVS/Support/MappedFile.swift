import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A local file mapped into memory, read-only, for many small reads of a file this process owns: a zip-v1 import
/// reads 30,000 entries of a few hundred bytes to a few KiB from the snapshot it downloaded, and a `pread` and a
/// copy into new memory for each were a tenth of the reading.
///
/// Only for a private file nobody else writes (an import's own download in the store's temporary folder): a mapping
/// of a file that another process shortens ends this one with SIGBUS when a page past the new end is touched,
/// which a `pread` would have reported as an error.
final class MappedFile: @unchecked Sendable {
    // @unchecked: the mapping is read-only and lives until deinit; reading it from several threads is safe.
    let bytes: UnsafeRawBufferPointer

    /// Maps the file; nil when it cannot be (an empty file, or mmap refused): callers then read with `pread`.
    init?(path: String) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_size > 0 else { return nil }
        let size = Int(info.st_size)
        guard let address = mmap(nil, size, PROT_READ, MAP_PRIVATE, fd, 0), address != MAP_FAILED else { return nil }
        bytes = UnsafeRawBufferPointer(start: address, count: size)
    }

    deinit { munmap(UnsafeMutableRawPointer(mutating: bytes.baseAddress), bytes.count) }
}
