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
public final class ChildProcess: Sendable {
    public enum TerminationReason: Sendable { case exit, uncaughtSignal }

    /// Where one of the child's standard streams goes.
    private enum Stream: Sendable {
        case pipe(Pipe)
        case handle(FileHandle)
        case null

        init(_ value: Any?) {
            switch value {
            case let pipe as Pipe: self = .pipe(pipe)
            case let handle as FileHandle: self = .handle(handle)
            default: self = .null
            }
        }

        var value: Any? {
            switch self {
            case .pipe(let pipe): pipe
            case .handle(let handle): handle
            case .null: nil
            }
        }
    }

    /// What `run()` starts, set before it (behind a lock, so the process can be handed between threads).
    private struct Configuration {
        var executableURL: URL?
        var arguments: [String]?
        var environment: [String: String]?
        var currentDirectoryURL: URL?
        var streams: [Stream] = [.handle(.standardInput), .handle(.standardOutput), .handle(.standardError)]
    }
    private let configuration = Mutex(Configuration())

    public var executableURL: URL? {
        get { configuration.withLock { $0.executableURL } }
        set { configuration.withLock { $0.executableURL = newValue } }
    }
    public var arguments: [String]? {
        get { configuration.withLock { $0.arguments } }
        set { configuration.withLock { $0.arguments = newValue } }
    }
    /// The child's whole environment; nil for this process's.
    public var environment: [String: String]? {
        get { configuration.withLock { $0.environment } }
        set { configuration.withLock { $0.environment = newValue } }
    }
    public var currentDirectoryURL: URL? {
        get { configuration.withLock { $0.currentDirectoryURL } }
        set { configuration.withLock { $0.currentDirectoryURL = newValue } }
    }
    /// A `Pipe`, a `FileHandle`, or nil for `/dev/null`; this process's own by default.
    public var standardInput: Any? {
        get { configuration.withLock { $0.streams[0] }.value }
        set { setStream(0, Stream(newValue)) }
    }
    public var standardOutput: Any? {
        get { configuration.withLock { $0.streams[1] }.value }
        set { setStream(1, Stream(newValue)) }
    }
    public var standardError: Any? {
        get { configuration.withLock { $0.streams[2] }.value }
        set { setStream(2, Stream(newValue)) }
    }

    private func setStream(_ index: Int, _ stream: Stream) { configuration.withLock { $0.streams[index] = stream } }

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
        let configuration = configuration.withLock { $0 }
        guard let path = configuration.executableURL?.path else { throw Failure.noExecutable }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP))

        var devNull: FileHandle?
        defer { try? devNull?.close() }
        var closeInParent: [FileHandle] = []
        func descriptor(_ stream: Stream, reading: Bool) throws -> Int32 {
            switch stream {
            case .pipe(let pipe):
                // The child's end, which the parent closes once the child has it. Foundation's `Pipe` gives both
                // ends the descriptor -1 when this process has no descriptor left (EMFILE): starting the child then
                // would hand it ours instead, and nothing would ever arrive at the pipe.
                let end = reading ? pipe.fileHandleForReading : pipe.fileHandleForWriting
                guard end.fileDescriptor >= 0 else { throw Failure.spawn(path: path, errno: EMFILE) }
                closeInParent.append(end)
                return end.fileDescriptor
            case .handle(let handle) where handle.fileDescriptor >= 0:
                return handle.fileDescriptor
            case .handle, .null:
                // `FileHandle.nullDevice` has no descriptor (-1): it means /dev/null, not "inherit ours".
                if devNull == nil { devNull = FileHandle(forUpdatingAtPath: "/dev/null") }
                guard let null = devNull?.fileDescriptor, null >= 0 else {
                    throw Failure.spawn(path: path, errno: EMFILE)
                }
                return null
            }
        }
        let streams = try configuration.streams.enumerated().map { try descriptor($1, reading: $0 == 0) }
        for (target, source) in streams.enumerated() {
            posix_spawn_file_actions_adddup2(&actions, source, Int32(target))
        }
        SpawnFileActions.closeInheritedDescriptors(&actions)
        if let directory = configuration.currentDirectoryURL?.path {
            guard SpawnFileActions.changeDirectory(&actions, to: directory) else {
                throw Failure.spawn(path: directory, errno: ENOSYS)
            }
        }

        let argv = ([path] + (configuration.arguments ?? [])).map { strdup($0) } + [nil]
        let environment = configuration.environment ?? ProcessInfo.processInfo.environment
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, path, &actions, &attributes, argv, envp)
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
}
