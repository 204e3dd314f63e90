import Foundation
import LLVSSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// What `scripts/install` and `scripts/package-deb` make, from the binaries the tests built: the installed tree, its
/// completions (each shell parses them, and bash's completes commands, options and remote names), its man pages
/// (each renders without a warning), the uninstall, and the .deb's fields, contents and a run of what it holds.
@Suite struct InstallationTests {
    let tests: CommandLineTests

    init() throws { tests = try CommandLineTests() }

    var repository: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
    }
    var binaries: String { CommandLineTests.binary.deletingLastPathComponent().path }
    func path(_ name: String) -> String { tests.directory.appendingPathComponent(name).path }

    struct Ran {
        var status: Int32
        var output: String
        var error: String
    }

    /// Runs a program found on PATH (or at a path) to its end.
    func run(_ program: String, _ arguments: [String], environment: [String: String] = [:]) throws -> Ran {
        let process = ChildProcess()
        let executable =
            program.hasPrefix("/")
            ? program : try #require(UserUnitsLookup.find(program), "\(program) is not installed")
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = CommandLineTests.cleanEnvironment.merging(environment) { _, new in new }
        process.currentDirectoryURL = tests.directory
        let output = path("run-\(UUID().uuidString).out"), error = path("run-\(UUID().uuidString).err")
        FileManager.default.createFile(atPath: output, contents: nil)
        FileManager.default.createFile(atPath: error, contents: nil)
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: error))
        try process.run()
        process.waitUntilExit()
        return Ran(
            status: process.terminationStatus, output: try String(contentsOfFile: output, encoding: .utf8),
            error: try String(contentsOfFile: error, encoding: .utf8))
    }

    static let shellsPresent = ["zsh", "fish", "groff", "dpkg-deb"].allSatisfy { UserUnitsLookup.find($0) != nil }

    @Test(.enabled(if: shellsPresent || CIEnvironment.requiresEveryTest, "needs zsh, fish, groff and dpkg-deb"))
    func theInstalledTreeWorksAndUninstallRemovesIt() async throws {
        let prefix = path("prefix")
        let installed = try run(repository.path + "/scripts/install", ["--prefix", prefix, "--bin-path", binaries])
        #expect(installed.status == 0, "\(installed.error)")
        var info = stat()
        for (file, mode) in [
            ("bin/llvs", 0o755), ("bin/llvs-mock", 0o755), ("share/bash-completion/completions/llvs", 0o644),
            ("share/zsh/site-functions/_llvs", 0o644), ("share/fish/vendor_completions.d/llvs.fish", 0o644),
            ("share/man/man1/llvs.1.gz", 0o644), ("share/man/man1/llvs-backup.1.gz", 0o644),
            ("share/man/man1/llvs-remote-add.1.gz", 0o644), ("share/man/man1/llvs-schedule-backup.1.gz", 0o644),
        ] {
            #expect(stat(prefix + "/" + file, &info) == 0, "\(file) is missing")
            #expect(Int(info.st_mode & 0o7777) == mode, "\(file): \(String(info.st_mode & 0o7777, radix: 8))")
        }
        let version = try run(prefix + "/bin/llvs", ["--version"])
        #expect(version.status == 0 && version.output.hasPrefix("llvs "))

        #expect(try run("bash", ["-n", prefix + "/share/bash-completion/completions/llvs"]).status == 0)
        #expect(try run("zsh", ["-n", prefix + "/share/zsh/site-functions/_llvs"]).status == 0)
        #expect(try run("fish", ["--no-execute", prefix + "/share/fish/vendor_completions.d/llvs.fish"]).status == 0)

        // Every page renders, without a warning from groff.
        let pages = try FileManager.default.contentsOfDirectory(atPath: prefix + "/share/man/man1")
        #expect(pages.count > 30)
        for page in pages {
            let text = try run(
                "sh", ["-c", "gzip -dc \"$1\" | groff -man -Tutf8 -ww -z", "sh", prefix + "/share/man/man1/" + page])
            #expect(text.status == 0 && text.error.isEmpty, "\(page): \(text.error)")
        }
        let rendered = try run(
            "sh",
            ["-c", "gzip -dc \"$1\" | groff -man -Tutf8 -P-cbou", "sh", prefix + "/share/man/man1/llvs-backup.1.gz"])
        #expect(rendered.output.contains("--exclude-caches") && rendered.output.contains("EXAMPLES"))

        // bash completes commands, options and the store's remote names.
        #expect(try await tests.run(["init", "--store", path("store")]).status == 0)
        #expect(
            try await tests.run(["remote", "add", "offsite", "file://" + path("r"), "--store", path("store")]).status
                == 0)
        let script = """
            source "$1"
            complete_words() { COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMPREPLY=(); _llvs; echo "${COMPREPLY[*]}"; }
            complete_words llvs backu
            complete_words llvs backup --exclude-c
            complete_words llvs --store "$2" push ""
            complete_words llvs restore out --dry
            complete_words llvs remote a
            """
        let completed = try run(
            "bash", ["-c", script, "bash", prefix + "/share/bash-completion/completions/llvs", path("store")],
            environment: ["PATH": prefix + "/bin:/usr/bin:/bin", "XDG_CONFIG_HOME": path("config")])
        #expect(
            completed.output.split(separator: "\n") == [
                "backup backups", "--exclude-caches", "offsite", "--dry-run", "add",
            ], "\(completed.output) \(completed.error)")

        let removed = try run(repository.path + "/scripts/install", ["--uninstall", "--prefix", prefix])
        #expect(removed.status == 0, "\(removed.error)")
        let left = try FileManager.default.subpathsOfDirectory(atPath: prefix).filter {
            var info = stat()
            return lstat(prefix + "/" + $0, &info) == 0 && info.st_mode & S_IFMT != S_IFDIR
        }
        #expect(left.isEmpty, "\(left)")
    }

    @Test(.enabled(if: shellsPresent || CIEnvironment.requiresEveryTest, "needs dpkg-deb"))
    func theDebianPackageNamesItsLibrariesAndRuns() async throws {
        // The tests' debug build links the toolchain's Swift runtime, which no package owns; a release build links
        // it in (what `scripts/package-deb` does by default), so only Debian's libraries remain to depend on.
        let built = try run(
            repository.path + "/scripts/package-deb",
            ["--bin-path", binaries, "--output", path("deb"), "--allow-toolchain-runtime"])
        #expect(built.status == 0, "\(built.error)")
        let package = built.output.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(
            package.hasSuffix(
                "_\(try run("dpkg", ["--print-architecture"]).output.trimmingCharacters(in: .whitespacesAndNewlines)).deb"
            ))

        let depends = try run("dpkg-deb", ["--field", package, "Depends"]).output
        for library in ["libcurl4", "libsqlite3-0", "libsodium23", "libzstd1", "libxml2", "libssl3", "libc6"] {
            #expect(depends.contains(library + " (>= "), "\(library) in \(depends)")
        }
        #expect(try run("dpkg-deb", ["--field", package, "Package"]).output == "llvs\n")
        let contents = try run("dpkg-deb", ["--contents", package]).output
        for file in [
            "./usr/bin/llvs", "./usr/bin/llvs-mock", "./usr/share/man/man1/llvs.1.gz",
            "./usr/share/bash-completion/completions/llvs", "./usr/share/zsh/vendor-completions/_llvs",
            "./usr/share/fish/vendor_completions.d/llvs.fish",
        ] {
            #expect(contents.contains(file), "\(file) in the package")
        }
        #expect(!contents.contains("installed-files"), "the installer's own list is not packaged")

        // Unpacked into a throwaway root, what it holds runs and finds every library it names.
        let root = path("root")
        #expect(try run("dpkg-deb", ["-x", package, root]).status == 0)
        let version = try run(root + "/usr/bin/llvs", ["--version"])
        #expect(version.status == 0 && version.output.hasPrefix("llvs "), "\(version.error)")
        #expect(!(try run("ldd", [root + "/usr/bin/llvs"]).output.contains("not found")))
    }
}

/// Finds a program on PATH, as a shell does.
enum UserUnitsLookup {
    static func find(_ program: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/\(program)" }.first {
            FileManager.default.isExecutableFile(atPath: $0)
        }
    }
}
