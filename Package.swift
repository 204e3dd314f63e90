// swift-tools-version:6.0
import PackageDescription

/// LLVS for Linux. The top level is fixed by ARCHITECTURE.md: Package.swift, Sources, Tests, Connectors, Mocks.
/// Only the toolchain and Debian's C libraries are used; nothing is fetched. It builds on Linux only (Glibc, `st_mtim`,
/// inotify, the C libraries from apt), so no Apple platform is declared.

/// Every connector: its folder under Connectors/ (the target is LLVS + the folder's name) and the system libraries
/// it needs beyond the shared layer. Adding a service is one line here, its folder, its kind in
/// `ConnectorRegistry.standard`, its mock and its tests.
let connectors: [(folder: String, extra: [String])] = [
    ("WebDAV", ["CLibXML2"]), ("GoogleDrive", []), ("OneDrive", []), ("PCloud", []), ("Box", []),
    ("Dropbox", []), ("S3", ["CLibXML2"]), ("SFTP", ["CCurl"]),
]
let connectorTargets: [Target.Dependency] = connectors.map { .target(name: "LLVS" + $0.folder) }

// The package, as described at the top.
let package = Package(
    name: "LLVS",
    products: [
        .library(name: "LLVSSupport", targets: ["LLVSSupport"]),
        .library(name: "LLVSCodecs", targets: ["LLVSCodecs"]),
        .library(name: "LLVS", targets: ["LLVS"]),
        .library(name: "LLVSSQLite", targets: ["LLVSSQLite"]),
        .library(name: "LLVSModel", targets: ["LLVSModel"]),
        .library(name: "LLVSProjection", targets: ["LLVSProjection"]),
        .library(name: "LLVSBackup", targets: ["LLVSBackup"]),
        .library(name: "LLVSRetention", targets: ["LLVSRetention"]),
        .library(name: "LLVSEncryption", targets: ["LLVSEncryption"]),
        .library(name: "LLVSConformance", targets: ["LLVSConformance"]),
        .library(name: "LLVSHTTP", targets: ["LLVSHTTP"]),
        .library(name: "LLVSCloudService", targets: ["LLVSCloudService"]),
        .library(name: "LLVSMocks", targets: ["LLVSMocks"]),
        .library(name: "LLVSCommandLine", targets: ["LLVSCommandLine"]),
        .library(name: "LLVSMount", targets: ["LLVSMount"]),
        .library(name: "LLVSRemoteStore", targets: ["LLVSRemoteStore"]),
    ] + connectors.map { .library(name: "LLVS" + $0.folder, targets: ["LLVS" + $0.folder]) } + [
        .executable(name: "llvs-mock", targets: ["llvs-mock"]),
        .executable(name: "llvs", targets: ["llvs"]),
        .executable(name: "llvs-bench", targets: ["llvs-bench"]),
        .executable(name: "loco", targets: ["loco"]),
    ],
    targets: [
        // System libraries. Each names its pkg-config file and the Debian package that provides it.
        .systemLibrary(
            name: "CCurl", path: "Sources/CCurl", pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]),
        .systemLibrary(
            name: "CLibXML2", path: "Sources/CLibXML2", pkgConfig: "libxml-2.0",
            providers: [.apt(["libxml2-dev"])]),
        .systemLibrary(
            name: "CSQLite3", path: "Sources/CSQLite3", pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(
            name: "CCrypto", path: "Sources/CCrypto", pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]),
        .systemLibrary(
            name: "CZlib", path: "Sources/CZlib", pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]),
        // glibc's own headers for the calls the Glibc module leaves out (extended attributes).
        .systemLibrary(name: "CLinux", path: "Sources/CLinux"),
        // libfuse 3, for `llvs mount`.
        .systemLibrary(
            name: "CFuse3", path: "Sources/CFuse3", pkgConfig: "fuse3",
            providers: [.apt(["libfuse3-dev"])]),
        // Whole-buffer deflate and CRC-32: twice zlib's speed on the tens of thousands of small zip entries of a
        // snapshot. zlib stays for what is streamed in pieces (large entries, of any size).
        .systemLibrary(
            name: "CDeflate", path: "Sources/CDeflate", pkgConfig: "libdeflate",
            providers: [.apt(["libdeflate-dev"])]),
        // Compression of stored values and compact remotes: fast, with a cheap way out for incompressible data.
        .systemLibrary(
            name: "CZstd", path: "Sources/CZstd", pkgConfig: "libzstd",
            providers: [.apt(["libzstd-dev"])]),
        .systemLibrary(
            name: "CSodium", path: "Sources/CSodium", pkgConfig: "libsodium",
            providers: [.apt(["libsodium-dev"])]),

        // What the store, the HTTP client and the mocks all need: byte coding, POSIX file helpers, checksums, HTTP
        // dates, the retry policy, seeded generators. It knows nothing of versions or services.
        .target(name: "LLVSSupport", dependencies: ["CCrypto", "CDeflate"]),

        // The codecs: zip (deflate on libdeflate for whole entries, zlib for streamed ones), the LZFSE decoder LLVS
        // apps compress with, and zstd for stored values and compact remotes.
        .target(name: "LLVSCodecs", dependencies: ["LLVSSupport", "CZlib", "CDeflate", "CZstd"]),

        // The core: versions, values, map, history, merge, storage, exchanges, coordinator.
        .target(name: "LLVS", dependencies: ["LLVSSupport", "LLVSCodecs"]),

        // SQLite storage, on the system's sqlite3.
        .target(name: "LLVSSQLite", dependencies: ["LLVS", "LLVSSupport", "CSQLite3"]),

        // Typed models as upstream LLVS stores them (JSON in one value each), merged property by property.
        .target(name: "LLVSModel", dependencies: ["LLVS", "LLVSSupport"]),

        // SQLite projections kept current from version diffs, and owned tables whose SQL writes become versions.
        .target(name: "LLVSProjection", dependencies: ["LLVS", "LLVSSupport", "LLVSModel", "LLVSSQLite", "CSQLite3"]),

        // Backups as trees of content-addressed objects: the chunker, folder listings, the walk that writes them and
        // the reader that restores them.
        .target(name: "LLVSBackup", dependencies: ["LLVS", "LLVSSupport", "CLinux"]),

        // Retention beside the backups: which backups a policy keeps (forget), the marks that forget them, and the
        // check of a store's history and kept backups.
        .target(name: "LLVSRetention", dependencies: ["LLVS", "LLVSSupport", "LLVSBackup"]),
        // Backups and versions as a read-only file system, on libfuse 3.
        .target(name: "LLVSMount", dependencies: ["LLVS", "LLVSSupport", "LLVSBackup", "LLVSRetention", "CFuse3"]),
        // A store whose values stay on a remote, read a byte range at a time through each version's index
        // (`llvs mount --from`).
        .target(name: "LLVSRemoteStore", dependencies: ["LLVS", "LLVSSupport"]),

        // Client-side encryption of a remote's files (Argon2id-wrapped key, XChaCha20-Poly1305 in chunks), as a file
        // system over any other, so every exchange, snapshot and backup works unchanged on an encrypted remote.
        .target(name: "LLVSEncryption", dependencies: ["LLVS", "LLVSSupport", "CSodium"]),

        // The HTTP client on libcurl, with the retry policy and OAuth 2 tokens every connector shares.
        .target(name: "LLVSHTTP", dependencies: ["LLVSSupport", "CCurl", "CCrypto"]),

        // What every HTTP connector shares (Connectors/README.md): the service client with its error classifier and
        // pacer, create-once, the ID path cache, the resumable upload engine and upload sources.
        .target(name: "LLVSCloudService", dependencies: ["LLVS", "LLVSSupport", "LLVSHTTP"]),

        // The connector conformance suite, shared by the tests and `llvs conformance`.
        .target(name: "LLVSConformance", dependencies: ["LLVS", "LLVSSupport", "LLVSHTTP"]),

    ]
        + connectors.map { connector in
            // Connectors: one small target per service, on the shared layer; each declares its own kind of remote.
            .target(
                name: "LLVS" + connector.folder,
                dependencies: ["LLVS", "LLVSSupport", "LLVSHTTP", "LLVSCloudService"]
                    + connector.extra.map { .target(name: $0) },
                path: "Connectors/" + connector.folder)
        } + [
            // Mock servers: the HTTP server kit, the OAuth 2 server, one mock per service; and the tool that runs them.
            .target(
                name: "LLVSMocks", dependencies: ["LLVSSupport", "LLVSCodecs", "LLVSHTTP", "CCrypto"],
                path: "Mocks/LLVSMocks"),
            .executableTarget(name: "llvs-mock", dependencies: ["LLVSMocks", "LLVSHTTP"], path: "Mocks/llvs-mock"),

            // The command-line tool: its commands over a registry of connector kinds (a library, so a program can run
            // them with a kind of its own), and the program that runs them with every kind this package ships.
            .target(
                name: "LLVSCommandLine",
                dependencies: [
                    "LLVS", "LLVSSupport", "LLVSSQLite", "LLVSBackup", "LLVSRetention", "LLVSEncryption", "LLVSHTTP",
                    "LLVSCloudService", "LLVSConformance", "LLVSMount", "LLVSRemoteStore",
                ] + connectorTargets),
            .executableTarget(name: "llvs", dependencies: ["LLVSCommandLine"]),

            // A contact book after LLVS's LoCo sample: typed models merged by property, a projection queried in SQL.
            .executableTarget(
                name: "loco", dependencies: ["LLVS", "LLVSModel", "LLVSProjection"], path: "Examples/LoCo"),

            // Benchmarks that print figures (never timed tests).
            .executableTarget(
                name: "llvs-bench",
                dependencies: [
                    "LLVS", "LLVSSupport", "LLVSSQLite", "LLVSModel", "LLVSProjection", "LLVSBackup", "LLVSEncryption",
                    "LLVSConformance", "LLVSHTTP", "LLVSMocks",
                ] + connectorTargets),

            // A small program the tests run as a child process (killed mid-save, two writers at once).
            .executableTarget(
                name: "llvs-test-helper",
                dependencies: ["LLVS", "LLVSSupport", "LLVSSQLite", "LLVSHTTP", "LLVSModel", "LLVSProjection"],
                path: "Tests/Helpers/llvs-test-helper"),

            // `llvs` with a kind of remote of its own, to show the commands take the registry as a value.
            .executableTarget(
                name: "llvs-fake-kind",
                dependencies: ["LLVSCommandLine", "LLVS", "LLVSSupport", "LLVSHTTP", "LLVSCloudService"],
                path: "Tests/Helpers/llvs-fake-kind"),

            .testTarget(
                name: "LLVSTests",
                dependencies: [
                    "LLVS", "LLVSSupport", "LLVSSQLite", "LLVSConformance", "LLVSMocks", "LLVSRemoteStore",
                    "llvs-test-helper",
                ], exclude: ["Fixtures"]),
            .testTarget(
                name: "LLVSModelTests",
                dependencies: ["LLVSModel", "LLVSProjection", "LLVS", "LLVSSQLite", "LLVSSupport", "llvs-test-helper"]),
            .testTarget(name: "LLVSBackupTests", dependencies: ["LLVSBackup", "LLVS", "LLVSSupport", "CLinux"]),
            .testTarget(
                name: "LLVSRetentionTests", dependencies: ["LLVSRetention", "LLVSBackup", "LLVS", "LLVSSupport"]),
            .testTarget(
                name: "LLVSEncryptionTests",
                dependencies: ["LLVSEncryption", "LLVS", "LLVSSupport", "LLVSConformance", "LLVSTestSupport"]),
            // What every connector's tests share: the conformance harness, a quick client, a fault control over a mock.
            .target(
                name: "LLVSTestSupport",
                dependencies: ["LLVS", "LLVSSupport", "LLVSHTTP", "LLVSMocks", "LLVSConformance", "LLVSEncryption"],
                path: "Tests/LLVSTestSupport"),
            .testTarget(
                name: "LLVSHTTPTests", dependencies: ["LLVSHTTP", "LLVSSupport", "LLVSMocks", "llvs-test-helper"]),
            .testTarget(
                name: "LLVSCloudServiceTests",
                dependencies: [
                    "LLVSCloudService", "LLVSOneDrive", "LLVSHTTP", "LLVSMocks", "LLVSConformance", "LLVS",
                    "LLVSSupport", "LLVSTestSupport",
                ]),
            .testTarget(
                name: "LLVSWebDAVTests",
                dependencies: [
                    "LLVSWebDAV", "LLVSMocks", "LLVSConformance", "LLVSHTTP", "LLVS", "LLVSSupport", "LLVSTestSupport",
                ]),
            .testTarget(
                name: "LLVSGoogleDriveTests",
                dependencies: [
                    "LLVSGoogleDrive", "LLVSMocks", "LLVSConformance", "LLVSHTTP", "LLVS", "LLVSSupport",
                    "LLVSTestSupport",
                ]),
            .testTarget(
                name: "LLVSOneDriveTests",
                dependencies: [
                    "LLVSOneDrive", "LLVSMocks", "LLVSConformance", "LLVSHTTP", "LLVS", "LLVSSupport",
                    "LLVSTestSupport",
                ]),
            .testTarget(
                name: "LLVSPCloudTests",
                dependencies: [
                    "LLVSPCloud", "LLVSMocks", "LLVSConformance", "LLVSHTTP", "LLVS", "LLVSSupport", "LLVSTestSupport",
                ]),
            .testTarget(
                name: "LLVSBoxTests",
                dependencies: [
                    "LLVSBox", "LLVSMocks", "LLVSConformance", "LLVSHTTP", "LLVS", "LLVSSupport", "LLVSTestSupport",
                    "llvs", "llvs-mock",
                ]),
            .testTarget(
                name: "LLVSDropboxTests",
                dependencies: [
                    "LLVSDropbox", "LLVSMocks", "LLVSConformance", "LLVSHTTP", "LLVS", "LLVSSupport", "LLVSTestSupport",
                    "llvs", "llvs-mock",
                ]),
            .testTarget(
                name: "LLVSS3Tests",
                dependencies: [
                    "LLVSS3", "LLVSMocks", "LLVSConformance", "LLVSHTTP", "LLVS", "LLVSSupport", "LLVSTestSupport",
                ]),
            .testTarget(
                name: "LLVSSFTPTests",
                dependencies: [
                    "LLVSSFTP", "LLVSMocks", "LLVSConformance", "LLVSHTTP", "LLVS", "LLVSSupport", "LLVSTestSupport",
                ]),
            .testTarget(
                name: "SystemLibraryTests",
                dependencies: ["CCurl", "CLibXML2", "CSQLite3", "CCrypto", "CZlib", "CDeflate", "CSodium"]),
            .testTarget(
                name: "LLVSCommandTests",
                dependencies: [
                    "llvs", "llvs-mock", "llvs-test-helper", "llvs-fake-kind", "loco", "LLVSSupport", "LLVSCommandLine",
                    "CLinux", "LLVSTestSupport", "LLVS",
                ],
                exclude: ["Scripts", "Fixtures"]),
        ],
    swiftLanguageModes: [.v6]
)
