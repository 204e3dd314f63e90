import CZstd
import Foundation
import Synchronization

/// zstd on Debian's libzstd: values are compressed whole as they are stored (`compressedIfSmaller`), and read back
/// whole (`decompress`) or in pieces (`ZstdStreamDecoder`). Contexts are kept in pools, since making one per value
/// costs more than compressing a small value.
public enum Zstd {
    /// The level stored values are compressed at. Measured on a 517 MB mixed tree (documents, headers, manual pages,
    /// Python sources, shared libraries; `llvs-bench repository`): level 1 makes the store 4% larger than level 3 and
    /// the first backup 15% faster, and both stay within 1.07x of restic's repository at its default compression;
    /// a backup's time is what a user waits for, so 1.
    public static let defaultLevel: Int32 = 1

    /// Smaller data is kept as it is: it saves a few bytes at most, and a store that receives thousands of versions of
    /// small values (an app's) would spend more time compressing them than receiving them.
    static let smallestCompressed = 512

    /// Data must save at least this fraction of its size (1/32) to be kept compressed; less is not worth
    /// decompressing on every read.
    static let minimumGainShift = 5

    /// Inputs above this size are first tried on samples: data that does not compress (a JPEG, a zip, anything
    /// encrypted) is recognised for the cost of compressing 64 KiB at level 1, not all of it.
    static let samplingThreshold = 256 << 10
    static let sampleCount = 4
    static let sampleSize = 16 << 10

    /// `data` compressed at `level` as one zstd frame (with its content size), or nil when that would not save at
    /// least 1/32 of it: such data is kept as it is.
    public static func compressedIfSmaller(_ data: Data, level: Int32 = defaultLevel) -> Data? {
        guard data.count >= Self.smallestCompressed else { return nil }
        return data.withUnsafeBytes { input -> Data? in
            if startsCompressed(input) { return nil }
            return compressionContexts.usingIfAvailable { context in
                if input.count > samplingThreshold, !samplesCompress(input, context: context) { return nil }
                return compress(
                    input, level: level, context: context, limit: input.count - input.count >> minimumGainShift)
            }
        }
    }

    /// `data` compressed at `level` as one zstd frame, however large it comes out.
    public static func compressed(_ data: Data, level: Int32) throws -> Data {
        try data.withUnsafeBytes { input in
            try compressionContexts.using { context in
                guard
                    let frame = compress(
                        input, level: level, context: context, limit: ZSTD_compressBound(input.count))
                else { throw ZstdError.malformed("zstd could not compress \(input.count) bytes") }
                return frame
            }
        }
    }

    /// Signatures of formats whose contents are always entropy-coded: gzip, xz, bzip2, zstd, PNG, JPEG, WOFF2, 7z, LZ4
    /// frames (not zip, whose entries may be stored as they are). zstd gains nothing on them (less than the 1/32 a
    /// record must save), so a value that starts with one is kept as it is without trying: a tree of manual pages and
    /// changelogs is a fifth such files, most too small for `samplesCompress`.
    static let compressedSignatures: [[UInt8]] = [
        [0x1F, 0x8B], [0xFD, 0x37, 0x7A, 0x58, 0x5A, 0x00], [0x42, 0x5A, 0x68], [0x28, 0xB5, 0x2F, 0xFD],
        [0x89, 0x50, 0x4E, 0x47], [0xFF, 0xD8, 0xFF], [0x77, 0x4F, 0x46, 0x32],
        [0x37, 0x7A, 0xBC, 0xAF, 0x27, 0x1C], [0x04, 0x22, 0x4D, 0x18],
    ]

    /// Whether `input` starts with one of `compressedSignatures`.
    static func startsCompressed(_ input: UnsafeRawBufferPointer) -> Bool {
        compressedSignatures.contains { signature in
            input.count >= signature.count && zip(signature, input).allSatisfy { $0 == $1 }
        }
    }

    /// Whether evenly spaced samples of `input` compress by the minimum gain at level 1.
    private static func samplesCompress(_ input: UnsafeRawBufferPointer, context: OpaquePointer) -> Bool {
        var samples = [UInt8]()
        samples.reserveCapacity(sampleCount * sampleSize)
        let stride = (input.count - sampleSize) / (sampleCount - 1)
        for index in 0..<sampleCount {
            let start = index * stride
            samples.append(contentsOf: input[start..<(start + sampleSize)])
        }
        return samples.withUnsafeBytes { sample in
            compress(sample, level: 1, context: context, limit: sample.count - sample.count >> minimumGainShift) != nil
        }
    }

    /// One frame of `input` if it fits in `limit` bytes, else nil.
    private static func compress(
        _ input: UnsafeRawBufferPointer, level: Int32, context: OpaquePointer, limit: Int
    ) -> Data? {
        ZSTD_CCtx_reset(context, ZSTD_reset_session_and_parameters)
        ZSTD_CCtx_setParameter(context, ZSTD_c_compressionLevel, level)
        var output = Data(count: limit)
        let written = output.withUnsafeMutableBytes { out in
            ZSTD_compress2(context, out.baseAddress, limit, input.baseAddress, input.count)
        }
        // An error here is zstd's "destination too small": the frame would not fit in `limit`.
        guard ZSTD_isError(written) == 0 else { return nil }
        output.count = written
        return output
    }

    /// The bytes of one frame. They must decompress to exactly `expectedSize` bytes when it is given, else to the
    /// size the frame declares (which every frame written here does), at most `largestValue`.
    /// - Throws: `ZstdError` when they are not such a frame.
    public static func decompress(_ frame: Data, expectedSize: Int64? = nil) throws -> Data {
        let declared = frame.withUnsafeBytes { ZSTD_getFrameContentSize($0.baseAddress, $0.count) }
        guard declared != ZSTD_CONTENTSIZE_ERROR else { throw ZstdError.malformed("it is not a zstd frame") }
        let size: Int64
        if declared == ZSTD_CONTENTSIZE_UNKNOWN {
            guard let expectedSize else { throw ZstdError.malformed("the frame does not say its size") }
            size = expectedSize
        } else {
            guard declared <= UInt64(largestValue) else {
                throw ZstdError.malformed("the frame declares \(declared) bytes, more than a value holds")
            }
            size = Int64(declared)
            if let expectedSize, expectedSize != size {
                throw ZstdError.sizeMismatch(expected: expectedSize, found: size)
            }
        }
        var output = Data(count: Int(size))
        let written = try decompressionContexts.using { context in
            try output.withUnsafeMutableBytes { out in
                try frame.withUnsafeBytes { input in
                    let result = ZSTD_decompressDCtx(
                        context, out.baseAddress, out.count, input.baseAddress, input.count)
                    try check(result)
                    return result
                }
            }
        }
        guard written == size else { throw ZstdError.sizeMismatch(expected: size, found: Int64(written)) }
        return output
    }

    /// The size a frame declares in its header (the first bytes of it suffice), or nil when it does not say.
    /// - Throws: `ZstdError.malformed` when the bytes do not start a frame.
    public static func declaredSize(ofFrameStartingWith bytes: Data) throws -> Int64? {
        let declared = bytes.withUnsafeBytes { ZSTD_getFrameContentSize($0.baseAddress, $0.count) }
        guard declared != ZSTD_CONTENTSIZE_ERROR else { throw ZstdError.malformed("it is not a zstd frame") }
        guard declared != ZSTD_CONTENTSIZE_UNKNOWN else { return nil }
        guard declared <= UInt64(largestValue) else {
            throw ZstdError.malformed("the frame declares \(declared) bytes, more than a value holds")
        }
        return Int64(declared)
    }

    /// The most a value holds (a record's length is 32 bits); no frame may claim more.
    public static let largestValue = Int64(UInt32.max)

    /// Throws zstd's account of `result` when it is an error code.
    static func check(_ result: Int) throws {
        guard ZSTD_isError(result) != 0 else { return }
        throw ZstdError.malformed(String(cString: ZSTD_getErrorName(result)))
    }

    static let compressionContexts = ContextPool(make: { ZSTD_createCCtx() }, free: { _ = ZSTD_freeCCtx($0) })
    static let decompressionContexts = ContextPool(make: { ZSTD_createDCtx() }, free: { _ = ZSTD_freeDCtx($0) })
}

/// What went wrong with zstd data.
public enum ZstdError: Error, Equatable, CustomStringConvertible {
    /// The bytes are not a zstd frame, or a damaged one (zstd's reason).
    case malformed(String)
    /// The frame holds another number of bytes than the record says.
    case sizeMismatch(expected: Int64, found: Int64)
    /// libzstd could not make a context (out of memory).
    case noContext

    public var description: String {
        switch self {
        case .malformed(let reason): "damaged compressed data (\(reason))"
        case .sizeMismatch(let expected, let found):
            "compressed data holds \(found) bytes where \(expected) were expected"
        case .noContext: "libzstd could not allocate a context"
        }
    }
}

/// libzstd contexts kept for reuse, one caller at a time each.
final class ContextPool: Sendable {
    private let idle = Mutex<[ContextHandle]>([])
    private let make: @Sendable () -> OpaquePointer?
    private let free: @Sendable (OpaquePointer) -> Void
    /// Enough for every thread of a busy machine; more are made and freed as needed.
    private static let keptIdle = 16

    init(make: @escaping @Sendable () -> OpaquePointer?, free: @escaping @Sendable (OpaquePointer) -> Void) {
        self.make = make
        self.free = free
    }

    func using<Result>(_ body: (OpaquePointer) throws -> Result) throws -> Result {
        let handle: ContextHandle
        if let idle = idle.withLock({ $0.popLast() }) {
            handle = idle
        } else {
            guard let made = make() else { throw ZstdError.noContext }
            handle = ContextHandle(made)
        }
        defer {
            let kept = idle.withLock { idle in
                guard idle.count < Self.keptIdle else { return false }
                idle.append(handle)
                return true
            }
            if !kept { free(handle.pointer) }
        }
        return try body(handle.pointer)
    }

    /// The same, for a body that cannot fail; nil without a context (nothing is then compressed).
    func usingIfAvailable<Result>(_ body: (OpaquePointer) -> Result?) -> Result? {
        let result: Result?? = try? using { context in body(context) }
        return result ?? nil
    }
}

/// A libzstd context. Unchecked: the pool hands each one to a single caller at a time, and takes it back before
/// anyone else gets it.
final class ContextHandle: @unchecked Sendable {
    let pointer: OpaquePointer
    init(_ pointer: OpaquePointer) { self.pointer = pointer }
}
