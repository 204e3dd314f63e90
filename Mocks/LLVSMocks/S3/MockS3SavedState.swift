import Foundation
import LLVSSupport

/// What `llvs-mock s3 --state DIR` keeps between runs: the buckets and their objects (key, ETag, time, and the file
/// under `files/` holding the bytes). Multipart uploads in progress are not kept: after a restart their parts are gone,
/// and the upload is answered `NoSuchUpload`, as S3 answers for one aborted.
struct MockS3SavedState: Codable {
    struct Object: Codable {
        var bucket: String
        var key: String
        var etag: String
        var modified: Date
        var file: String
    }

    var buckets: [String]
    var objects: [Object]
}

extension MockStateDirectory {
    /// Writes the buckets and objects of `state`; each object's bytes go under a name of its bucket, key and ETag, so
    /// an object not written since the last save is not copied again, and files no object names are removed.
    func saveS3(_ state: MockS3State) {
        var objects: [MockS3SavedState.Object] = []
        for (bucket, keys) in state.buckets {
            for (key, object) in keys {
                let name = SHA256.hex(Data((bucket + "\u{0}" + key.text + "\u{0}" + object.etag).utf8))
                switch object.content {
                case .data(let data): _ = try? keep(data, orFileAt: nil, as: name)
                case .spooled(let url, _): _ = try? keep(nil, orFileAt: url, as: name)
                }
                objects.append(
                    MockS3SavedState.Object(
                        bucket: bucket, key: key.text, etag: object.etag, modified: object.modified, file: name))
            }
        }
        prune(keeping: Set(objects.map(\.file)))
        objects.sort { ($0.bucket, $0.key) < ($1.bucket, $1.key) }
        try? save(MockS3SavedState(buckets: state.buckets.keys.sorted(), objects: objects))
    }

    /// The state saved before, each object's bytes read from its file as needed; nil when nothing was saved.
    func loadS3() throws -> MockS3State? {
        guard let saved = try load(MockS3SavedState.self) else { return nil }
        var state = MockS3State()
        for bucket in saved.buckets { state.buckets[bucket] = [:] }
        for object in saved.objects {
            let url = file(object.file)
            let size = (try FileManager.default.attributesOfItem(atPath: url.path)[.size] as? NSNumber)?.int64Value
            guard let size else { throw MockStateError("the mock state names \(url.path), which is missing") }
            state.buckets[object.bucket, default: [:]][MockNameKey(object.key)] = MockS3Object(
                content: .spooled(url, size: size), etag: object.etag, modified: object.modified)
        }
        return state
    }
}
