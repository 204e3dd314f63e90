import LLVSBox
import LLVSDropbox
import LLVSS3
import LLVSSFTP
import LLVSCloudService
import LLVSGoogleDrive
import LLVSOneDrive
import LLVSPCloud
import LLVSWebDAV

extension ConnectorRegistry {
    /// Every kind this package ships: each connector target declares its own (`ConnectorKind.box` in `LLVSBox`), and
    /// this is the one list of them.
    public static let standard = ConnectorRegistry([
        .localFolder, .webDAV, .googleDrive, .oneDrive, .pCloud, .box, .dropbox, .s3, .sftp,
    ])
}
