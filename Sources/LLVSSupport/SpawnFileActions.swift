import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The file actions of `posix_spawn` that glibc has (since 2.34 and 2.29) but declares only for `_GNU_SOURCE`, which
/// Swift's Glibc module is not built with: they are looked up by name.
public enum SpawnFileActions {
    private typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    private typealias AddChdir =
        @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32

    private static let addCloseFrom: AddCloseFrom? = dlsym(
        UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np"
    )
    .map { unsafeBitCast($0, to: AddCloseFrom.self) }
    private static let addChdir: AddChdir? = dlsym(
        UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addchdir_np"
    )
    .map { unsafeBitCast($0, to: AddChdir.self) }

    /// Has the child close every descriptor above its standard three, after the `dup2`s before it.
    ///
    /// Why every spawn here needs it: Foundation opens pipes and files without close-on-exec, so a child started while
    /// another thread holds a pipe's write end keeps a copy of it, and whoever reads that pipe waits for an end of
    /// file that comes only when the child ends (a server started by one test hangs another test's read for good).
    public static func closeInheritedDescriptors(_ actions: inout posix_spawn_file_actions_t) {
        _ = addCloseFrom?(&actions, 3)
    }

    /// Has the child start in `directory`; false where glibc cannot.
    public static func changeDirectory(_ actions: inout posix_spawn_file_actions_t, to directory: String) -> Bool {
        guard let addChdir else { return false }
        return addChdir(&actions, directory) == 0
    }
}
