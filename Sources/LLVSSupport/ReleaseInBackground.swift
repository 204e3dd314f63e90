import Dispatch

/// Lets go of `value` on a background thread: for a large structure built for one job (an import's index of tens
/// of thousands of names and entries, a staging store's caches) whose freeing would otherwise sit between the job
/// and what the caller does next. Freeing an import's index took 15–20 ms on the way to the first usable store.
package func releaseInBackground<Value: Sendable>(_ value: consuming Value) {
    // The closure holds the last reference; it is destroyed on the worker thread once it has run.
    let held = value
    DispatchQueue.global(qos: .utility).async { withExtendedLifetime(held) {} }
}
