import Foundation
import Testing

/// An S3 remote from the command line: `llvs-mock s3`, keys given on the account (the secret on standard input) or
/// taken from the environment as the AWS tools do, `llvs conformance --faults` through it, a sync between two stores.
@Suite final class S3CommandTests {
    let tests: CommandLineTests

    init() throws { tests = try CommandLineTests() }

    func path(_ name: String) -> String { tests.directory.appendingPathComponent(name).path }

    @Test func anS3RemoteConformsAndSyncsFromTheCommandLine() async throws {
        let mock = try MockProcess(["s3"], lineCount: 2)
        let key = mock.fields["access_key_id"] ?? "", secret = mock.fields["secret_access_key"] ?? ""
        let added = try await tests.run(
            [
                "remote", "add", "--all-stores", "bucket", "s3://llvs/stores/shared", "--endpoint", mock.url,
                "--access-key-id", key, "--secret-access-key-stdin",
            ], input: Data(secret.utf8))
        #expect(added.status == 0, "\(added.error)")
        let conformance = try await tests.run(
            ["conformance", "bucket", "--faults", "--listing-count", "120", "--large-file-mib", "17"])
        #expect(conformance.status == 0, "\(conformance.text)\n\(conformance.error)")
        #expect(conformance.text.contains("23 passed, 0 failed"), "\(conformance.text)")

        for store in ["a", "b"] { #expect(try await tests.run(["init", "--store", path(store)]).status == 0) }
        #expect(
            try await tests.run(["put", "k", "-", "--store", path("a")], input: Data("through S3".utf8)).status == 0)
        #expect(try await tests.run(["sync", "bucket", "--store", path("a")]).status == 0)
        #expect(try await tests.run(["sync", "bucket", "--store", path("b")]).status == 0)
        #expect(try await tests.run(["get", "k", "--store", path("b")]).text == "through S3")

        // Keys and endpoint from the environment, for a URL with no account.
        let fromEnvironment = try await tests.run(
            ["conformance", "s3://llvs/elsewhere", "--listing-count", "5", "--large-file-mib", "1"],
            environment: ["AWS_ACCESS_KEY_ID": key, "AWS_SECRET_ACCESS_KEY": secret, "LLVS_S3_ENDPOINT": mock.url])
        #expect(fromEnvironment.status == 0, "\(fromEnvironment.text)\n\(fromEnvironment.error)")
        // A wrong secret ends with S3's reason and what to check.
        let wrong = try await tests.run(
            ["conformance", "s3://llvs/elsewhere", "--listing-count", "5"],
            environment: ["AWS_ACCESS_KEY_ID": key, "AWS_SECRET_ACCESS_KEY": "not it", "LLVS_S3_ENDPOINT": mock.url])
        #expect(
            wrong.status != 0 && (wrong.text + wrong.error).contains("SignatureDoesNotMatch"),
            "\(wrong.text)\n\(wrong.error)")
        let noBucket = try await tests.run(["remote", "add", "--all-stores", "nob", "s3:///path"])
        #expect(noBucket.status == 2 && noBucket.error.contains("s3://my-bucket/llvs"), "\(noBucket.error)")
        withExtendedLifetime(mock) {}
    }
}
