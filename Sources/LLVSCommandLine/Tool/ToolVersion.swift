import LLVS

/// What `llvs --version` prints: the release, and the formats this build writes, which is what decides whether two
/// machines can share a store or a remote.
enum ToolVersion {
    static let release = "0.9.0"

    static var text: String {
        "llvs \(release) (store format \(StoreDescriptor.currentFormat); remote formats upstream and compact)\n"
    }
}
