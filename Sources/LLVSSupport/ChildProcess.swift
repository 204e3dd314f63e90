import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A child process started with `posix_spawn`, with the part of Foundation's `Process` interface this package uses
/// (the same names, so a caller reads the same).
///
/// Why not `Process`: on Linux, `Process.run()` lists `/proc/self/fd` to close inherited descriptors and copies each
/// entry's whole 256-byte name field, reading past glibc's buffer; when that buffer ends at an unmapped page the
/// whole program crashes (swift-corelibs-foundation, fixed after Swift 6.3.1). A process that starts hundreds of
/// children (the test suite) meets it. Here the child closes every descriptor above 2 itself (`closefrom`), so
/// nothing is listed.
public final class ChildProcess: @unchecked Sendable {
    public enum TerminationReason: Sendable { case exit, uncaughtSignal }

    public var executableURL: URL?
    public var arguments: [String]?
    /// The child's whole environment; nil for this process's.
    public var environment: [String: String]?
    public var currentDirectoryURL: URL?
    /// A `Pipe`, a `FileHandle`, or nil for `/dev/null`; this process's own by default.
    public var standardInput: Any? = FileHandle.standardInput
    public var standardOutput: Any? = FileHandle.standardOutput
    public var standardError: Any? = FileHandle.standardError

    private struct State {
        var pid: pid_t = 0
        var ended: (status: Int32, reason: TerminationReason)?
    }
    private let state = Mutex(State())
    private let endedCondition = NSCondition()

    public init() {}

    public var processIdentifier: Int32 { state.withLock { $0.pid } }
    /// True from `run()` until the child has ended and been reaped.
    public var isRunning: Bool { state.withLock { $0.pid != 0 && $0.ended == nil } }
    /// The exit status, or the signal that ended the child; only once it has ended.
    public var terminationStatus: Int32 { state.withLock { $0.ended?.status ?? 0 } }
    public var terminationReason: TerminationReason { state.withLock { $0.ended?.reason ?? .exit } }

    public enum Failure: Error, CustomStringConvertible {
        case noExecutable
        case spawn(path: String, errno: Int32)
        public var description: String {
            switch self {
            case .noExecutable: "no executable was given"
            case .spawn(let path, let code): "cannot start \(path): \(String(cString: strerror(code)))"
            }
        }
    }

    /// Starts the child, in a process group of its own (as `Process` does), and a thread that reaps it.
    public func run() throws {
        guard let path = executableURL?.path else { throw Failure.noExecutable }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP))

        var devNull: FileHandle?
        var closeInParent: [FileHandle] = []
        func descriptor(_ stream: Any?, reading: Bool) throws -> Int32 {
            switch stream {
            case let pipe as Pipe:
                closeInParent.append(reading ? pipe.fileHandleForReading : pipe.fileHandleForWriting)
                return reading ? pipe.fileHandleForReading.fileDescriptor : pipe.fileHandleForWriting.fileDescriptor
            case let handle as FileHandle:
                return handle.fileDescriptor
            default:
                if devNull == nil { devNull = FileHandle(forUpdatingAtPath: "/dev/null") }
                return devNull?.fileDescriptor ?? -1
            }
        }
        let streams = [
            try descriptor(standardInput, reading: true), try descriptor(standardOutput, reading: false),
            try descriptor(standardError, reading: false),
        ]
        for (target, source) in streams.enumerated() where source >= 0 {
            posix_spawn_file_actions_adddup2(&actions, source, Int32(target))
        }
        _ = Self.closeFrom?(&actions, 3)
        if let directory = currentDirectoryURL?.path {
            guard let chdir = Self.chdir, chdir(&actions, directory) == 0 else {
                throw Failure.spawn(path: directory, errno: ENOSYS)
            }
        }

        let argv = ([path] + (arguments ?? [])).map { strdup($0) } + [nil]
        let environment = self.environment ?? ProcessInfo.processInfo.environment
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, path, &actions, &attributes, argv, envp)
        try? devNull?.close()
        guard result == 0 else { throw Failure.spawn(path: path, errno: result) }
        for handle in closeInParent { try? handle.close() }
        state.withLock { $0.pid = pid }

        let child = pid
        let reaper = Thread { [self] in
            var status: Int32 = 0
            while waitpid(child, &status, 0) == -1, errno == EINTR {}
            let signal = status & 0x7f
            let ended: (Int32, TerminationReason) =
                signal == 0 ? ((status >> 8) & 0xff, .exit) : (signal, .uncaughtSignal)
            endedCondition.lock()
            state.withLock { $0.ended = ended }
            endedCondition.broadcast()
            endedCondition.unlock()
        }
        reaper.start()
    }

    /// Blocks until the child has ended.
    public func waitUntilExit() {
        endedCondition.lock()
        while state.withLock({ $0.pid != 0 && $0.ended == nil }) { endedCondition.wait() }
        endedCondition.unlock()
    }

    public func terminate() { signal(SIGTERM) }
    public func interrupt() { signal(SIGINT) }

    private func signal(_ number: Int32) {
        let pid = state.withLock { $0.ended == nil ? $0.pid : 0 }
        if pid > 0 { kill(pid, number) }
    }

    // glibc has both (2.34 and 2.29), but its headers declare them only for _GNU_SOURCE, which Swift's Glibc module
    // is not built with: they are looked up by name.
    private typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    private typealias AddChdir =
        @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32

    private static let closeFrom: AddCloseFrom? = dlsym(
        UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np"
    )
    .map { unsafeBitCast($0, to: AddCloseFrom.self) }
    private static let chdir: AddChdir? = dlsym(
        UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addchdir_np"
    )
    .map { unsafeBitCast($0, to: AddChdir.self) }
}
