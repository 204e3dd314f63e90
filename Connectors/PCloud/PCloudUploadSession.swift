import Foundation
import LLVS
import LLVSCloudService
import LLVSHTTP

/// pCloud's upload sessions on the shared engine: `upload_create` opens one, `upload_write` puts bytes at an offset,
/// `upload_info` says how many it holds, `upload_save` makes the file, `upload_delete` drops it. An unknown upload ID
/// (2067) is a session that expired.
struct PCloudUploadSession: ResumableUploadProtocol {
    let api: PCloudAPI
    let folderID: String
    let name: String
    let path: String
    static let unknownUpload = 2067

    func open(size: Int64) async throws -> UInt64 {
        try await api.call(PCloudAnswer.UploadCreated.self, "upload_create", path: path).uploadid
    }

    func send(
        _ piece: UploadSource, offset: Int64, length: Int64, total: Int64, to session: UInt64
    ) async throws -> ResumableProgress<PCloudItem> {
        do {
            _ = try await api.call(
                PCloudAnswer.Empty.self, "upload_write",
                [("uploadid", String(session)), ("uploadoffset", String(offset))],
                put: piece.body(offset: offset, length: length), attempts: 1, passing: [Self.unknownUpload], path: path)
            return .received(offset + length)
        } catch let error as PCloudCallError where error.code == Self.unknownUpload {
            return .expired
        }
    }

    func status(of session: UInt64, total: Int64) async throws -> ResumableProgress<PCloudItem> {
        do {
            let info = try await api.call(
                PCloudAnswer.UploadInfo.self, "upload_info", [("uploadid", String(session))], attempts: 1,
                passing: [Self.unknownUpload], path: path)
            return .received(info.size)
        } catch let error as PCloudCallError where error.code == Self.unknownUpload {
            return .expired
        }
    }

    func finish(_ session: UInt64, total: Int64) async throws -> ResumableProgress<PCloudItem> {
        do {
            let saved = try await api.call(
                PCloudAnswer.Metadata.self, "upload_save",
                [("uploadid", String(session)), ("folderid", folderID), ("name", name)], attempts: 1,
                passing: [Self.unknownUpload], path: path)
            return .done(saved.metadata)
        } catch let error as PCloudCallError where error.code == Self.unknownUpload {
            return .expired
        }
    }

    func abandon(_ session: UInt64) async {
        try? await api.call("upload_delete", [("uploadid", String(session))], attempts: 1, path: path)
    }
}
