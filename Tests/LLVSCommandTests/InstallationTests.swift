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

    /// Runs a program found on PATH (or at a path) to its end, as the tests run `llvs`.
    func run(
        _ program: String, _ arguments: [String], environment: [String: String] = [:]
    ) async throws -> CommandLineTests.Result {
        let executable =
            program.hasPrefix("/")
            ? URL(fileURLWithPath: program) : try #require(SearchPath.find(program), "\(program) is not installed")
        return try await tests.run(arguments, environment: environment, executable: executable)
    }

    static let shellsPresent = ["zsh", "fish", "groff", "dpkg-deb"].allSatisfy { SearchPath.find($0) != nil }

    @Test(.enabled(if: shellsPresent || CIEnvironment.requiresEveryTest, "needs zsh, fish, groff and dpkg-deb"))
    func theInstalledTreeWorksAndUninstallRemovesIt() async throws {
        let prefix = path("prefix")
        let installed = try await run(
            repository.path + "/scripts/install", ["--prefix", prefix, "--bin-path", binaries])
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
        let version = try await run(prefix + "/bin/llvs", ["--version"])
        #expect(version.status == 0 && version.text.hasPrefix("llvs "))

        #expect(try await run("bash", ["-n", prefix + "/share/bash-completion/completions/llvs"]).status == 0)
        #expect(try await run("zsh", ["-n", prefix + "/share/zsh/site-functions/_llvs"]).status == 0)
        #expect(
            try await run("fish", ["--no-execute", prefix + "/share/fish/vendor_completions.d/llvs.fish"]).status == 0)

        // Every page renders, without a warning from groff.
        let pages = try FileManager.default.contentsOfDirectory(atPath: prefix + "/share/man/man1")
        #expect(pages.count > 30)
        for page in pages {
            let text = try await run(
                "sh", ["-c", "gzip -dc \"$1\" | groff -man -Tutf8 -ww -z", "sh", prefix + "/share/man/man1/" + page])
            #expect(text.status == 0 && text.error.isEmpty, "\(page): \(text.error)")
        }
        let rendered = try await run(
            "sh",
            ["-c", "gzip -dc \"$1\" | groff -man -Tutf8 -P-cbou", "sh", prefix + "/share/man/man1/llvs-backup.1.gz"])
        #expect(rendered.text.contains("--exclude-caches") && rendered.text.contains("EXAMPLES"))

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
        let completed = try await run(
            "bash", ["-c", script, "bash", prefix + "/share/bash-completion/completions/llvs", path("store")],
            environment: ["PATH": prefix + "/bin:/usr/bin:/bin", "XDG_CONFIG_HOME": path("config")])
        #expect(
            completed.text.split(separator: "\n") == [
                "backup backups", "--exclude-caches", "offsite", "--dry-run", "add",
            ], "\(completed.text) \(completed.error)")

        let removed = try await run(repository.path + "/scripts/install", ["--uninstall", "--prefix", prefix])
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
        let built = try await run(
            repository.path + "/scripts/package-deb",
            ["--bin-path", binaries, "--output", path("deb"), "--allow-toolchain-runtime"])
        #expect(built.status == 0, "\(built.error)")
        let package = built.text.trimmingCharacters(in: .whitespacesAndNewlines)
        let architecture = try await run("dpkg", ["--print-architecture"]).text
            .trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(package.hasSuffix("_\(architecture).deb"), "\(package)")

        let depends = try await run("dpkg-deb", ["--field", package, "Depends"]).text
        for library in ["libcurl4", "libsqlite3-0", "libsodium23", "libzstd1", "libxml2", "libssl3", "libc6"] {
            #expect(depends.contains(library + " (>= "), "\(library) in \(depends)")
        }
        #expect(try await run("dpkg-deb", ["--field", package, "Package"]).text == "llvs\n")
        let contents = try await run("dpkg-deb", ["--contents", package]).text
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
        #expect(try await run("dpkg-deb", ["-x", package, root]).status == 0)
        let version = try await run(root + "/usr/bin/llvs", ["--version"])
        #expect(version.status == 0 && version.text.hasPrefix("llvs "), "\(version.error)")
        #expect(!(try await run("ldd", [root + "/usr/bin/llvs"]).text.contains("not found")))
    }
}
