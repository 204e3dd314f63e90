import Foundation
import LLVS
import LLVSCloudService
import LLVSHTTP

extension ConnectorKind {
    /// `s3://bucket/prefix`: a bucket (and a folder in it) on AWS, or on any S3-compatible server by `--endpoint`.
    public static let s3 = ConnectorKind(
        name: "s3", serviceName: "S3", address: .bucket,
        options: [
            ConnectorOption(
                "access-key-id", "KEY", "the access key's ID (else AWS_ACCESS_KEY_ID, else the AWS profile)",
                level: .account),
            ConnectorOption(
                "endpoint", "URL",
                "an S3-compatible server (MinIO, Ceph, Backblaze B2, Wasabi, R2, a mock from `llvs-mock s3`) instead of AWS",
                level: .account, type: .httpURL),
            ConnectorOption(
                "region", "REGION", "the bucket's region (else AWS_REGION, AWS_DEFAULT_REGION, then us-east-1)",
                level: .account),
            ConnectorOption(
                "addressing", "STYLE",
                "path (https://endpoint/bucket/key) or virtual (https://bucket.endpoint/key); default: virtual on AWS, path elsewhere",
                level: .account, type: .choice(["path", "virtual"])),
            ConnectorOption(
                "folder-markers", "on|off",
                "keep empty folders as zero-byte `folder/` objects (off for a server that stores keys as files, as rclone serve s3)",
                level: .account, type: .choice(["on", "off"]), defaultValue: "on"),
            ConnectorOption(
                "conditional-writes", "on|off",
                "whether the server refuses a create where a key is (If-None-Match: *); off for one that ignores it, as rclone serve s3",
                level: .account, type: .choice(["on", "off"]), defaultValue: "on"),
        ],
        secret: ConnectorSecret("secret-access-key", "the access key's secret", required: false),
        extraEnvironment: [
            ("AWS_ACCESS_KEY_ID", "the access key's ID, when the account has none"),
            ("AWS_SECRET_ACCESS_KEY", "its secret"), ("AWS_SESSION_TOKEN", "a temporary key's token"),
            ("AWS_PROFILE", "the profile of ~/.aws/credentials to use (default: default)"),
            ("AWS_SHARED_CREDENTIALS_FILE", "the credentials file (default: ~/.aws/credentials)"),
            ("AWS_REGION", "the region, when the account names none"),
        ]
    ) { access in
        guard let bucket = access.url.host, !bucket.isEmpty else {
            throw ConnectorKindError.usage("an S3 remote names its bucket, as s3://my-bucket/llvs")
        }
        let environment = access.environment
        let region =
            access.account["region"] ?? environment["AWS_REGION"].flatMap { $0.isEmpty ? nil : $0 }
            ?? environment["AWS_DEFAULT_REGION"].flatMap { $0.isEmpty ? nil : $0 } ?? "us-east-1"
        let credentials: S3Credentials
        do {
            credentials = try S3Credentials.resolve(
                accessKeyID: access.account["access-key-id"], secret: access.secret, environment: environment,
                home: environment["HOME"] ?? NSHomeDirectory())
        } catch {
            throw ConnectorKindError.failed("\(error)")
        }
        let addressing = access.account["addressing"]
        var configuration = S3Configuration(
            bucket: bucket, prefix: access.url.path, region: region, endpoint: access.account.url("endpoint"),
            pathStyle: addressing.map { $0 == "path" })
        configuration.folderMarkers = access.account["folder-markers"] != "off"
        configuration.conditionalWrites = access.account["conditional-writes"] != "off"
        return S3FileSystem(
            configuration: configuration, http: HTTPClient(configuration: access.http),
            credentials: credentials.signer(region: region))
    }
}
