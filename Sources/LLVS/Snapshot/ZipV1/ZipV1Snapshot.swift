import LLVSCodecs
import LLVSSupport
/// The snapshot format of LLVS apps: a zip (deflate) of the app's whole store folder in upstream's layout
/// (`UpstreamLayout`), cut into chunks of 5,000,000 bytes. Every LLVS device restores it, so it is what
/// `llvs snapshot` writes unless told otherwise.
public enum ZipV1Snapshot {
    public static let format = "zip-v1"
}
