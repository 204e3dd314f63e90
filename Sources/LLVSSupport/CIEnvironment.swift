import Foundation

/// Whether this run must run every test: `CI` set to a true value (`true`, `1` or `yes`, in any case). Then a test that
/// needs something missing (a real server, a client library) fails and says what, where elsewhere it is a skip that
/// says why. `CI=false`, `CI=0` or an empty `CI` is not CI.
public enum CIEnvironment {
    public static var requiresEveryTest: Bool {
        guard let value = ProcessInfo.processInfo.environment["CI"] else { return false }
        return ["true", "1", "yes"].contains(value.lowercased())
    }
}
