import Foundation
import Testing

@testable import LLVSSFTP

/// The `ls -l` lines OpenSSH's SFTP server sends beside each name, as libcurl passes them on.
@Suite struct SFTPListingTests {
    @Test func openSSHLinesGiveNameKindAndSize() throws {
        let text = """
            drwx------    3 root     root         4096 Dec  6 23:10 .
            drwxrwxrwt 6235 root     root       479232 Dec  6 23:10 ..
            -rw-------    1 root     root     11546969 Dec  6 23:10 large.bin
            drwx------    2 root     root         4096 Jan  3  2025 folder with  two spaces
            -rw-------    1 1000     1000            0 Dec  6 23:10  leading space.txt
            -rw-------    1 root     root            5 Dec  6 23:10 trailing space.txt 
            lrwxrwxrwx    1 root     root            9 Dec  6 23:10 link -> large.bin
            srwxr-xr-x    1 root     root            0 Dec  6 23:10 socket

            """
        let entries = try SFTPListing.parse(Data(text.utf8)).map {
            SFTPListing.Entry(name: $0.name, kind: $0.kind, size: $0.size)
        }
        #expect(
            entries == [
                .init(name: "large.bin", kind: .file, size: 11_546_969),
                .init(name: "folder with  two spaces", kind: .folder, size: nil),
                .init(name: " leading space.txt", kind: .file, size: 0),
                .init(name: "trailing space.txt ", kind: .file, size: 5),
                .init(name: "link", kind: .link, size: nil),
                .init(name: "socket", kind: .other, size: nil),
            ])
    }

    /// The latest UTC moment a line's time can mean: its minute (or day) in the zone furthest behind UTC, 12 hours.
    @Test func aLinesTimeGivesTheLatestMomentItCanMean() throws {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = try #require(TimeZone(identifier: "UTC"))
        let now = try #require(calendar.date(from: DateComponents(year: 2026, month: 12, day: 6, hour: 23)))
        func date(_ year: Int, _ month: Int, _ day: Int, _ hour: Int, _ minute: Int) throws -> Date {
            try #require(
                calendar.date(from: DateComponents(year: year, month: month, day: day, hour: hour, minute: minute)))
        }
        #expect(
            SFTPListing.latestTime(month: "Dec", day: "6", timeOrYear: "22:10", now: now)
                == (try date(2026, 12, 7, 10, 11)))
        // A time-of-day date ahead of now is last year's (`ls` shows the last six months so).
        #expect(
            SFTPListing.latestTime(month: "Dec", day: "31", timeOrYear: "08:00", now: now)
                == (try date(2025, 12, 31, 20, 1)))
        #expect(
            SFTPListing.latestTime(month: "Jan", day: "3", timeOrYear: "2025", now: now)
                == (try date(2025, 1, 4, 12, 0)))
        #expect(SFTPListing.latestTime(month: "Foo", day: "3", timeOrYear: "2025", now: now) == nil)
        #expect(SFTPListing.latestTime(month: "Jan", day: "3", timeOrYear: "25:99", now: now) == nil)
    }

    @Test func aLineInAnotherFormIsRefusedWithTheLine() {
        #expect(throws: SFTPListing.Unreadable(line: "just-a-name")) {
            try SFTPListing.parse(Data("just-a-name\n".utf8))
        }
    }

    @Test func namesOnlyListingsLeaveOutTheDotEntries() {
        #expect(SFTPListing.names(Data(".\n..\na\n b \n".utf8)) == ["a", " b "])
    }

    @Test func urlsEscapeEveryByteOutsideTheUnreservedSetAndQuotesEscapeQuotes() {
        let configuration = SFTPConfiguration(
            host: "::1", port: 2222, user: "me", root: "/~/llvs//data/", knownHostsFile: "/dev/null")
        #expect(configuration.root == "/~/llvs/data")
        #expect(configuration.serverPath(["a b", "c#?%"]) == "/~/llvs/data/a b/c#?%")
        #expect(
            configuration.url(configuration.serverPath(["a b", "c#?%"]))
                == "sftp://[::1]:2222/~/llvs/data/a%20b/c%23%3F%25")
        #expect(configuration.serverPath([], folder: true) == "/~/llvs/data/")
        #expect(SFTPConfiguration.quoted("/a \"b\" \\c") == "\"/a \\\"b\\\" \\\\c\"")
        #expect(configuration.knownHostsName == "[::1]:2222")
    }

    @Test func fingerprintsAreOpenSSHs() {
        #expect(SFTPConfiguration.isFingerprint("SHA256:iGDl9q3+sks4YeXjIr7PrRZJqhqrTPZiESgDrKvy/ak"))
        #expect(!SFTPConfiguration.isFingerprint("SHA256:short"))
        #expect(!SFTPConfiguration.isFingerprint("MD5:iGDl9q3+sks4YeXjIr7PrRZJqhqrTPZiESgDrKvy/ak"))
        // The type is read from the key blob: a 4-byte length, then the name.
        let blob: [UInt8] =
            [0, 0, 0, 11] + Array("ssh-ed25519".utf8) + [0, 0, 0, 32] + [UInt8](repeating: 7, count: 32)
        #expect(SFTPHostKey(blob: blob).type == "ssh-ed25519")
        #expect(SFTPHostKey(blob: blob).fingerprint.hasPrefix("SHA256:"))
        #expect(SFTPError.keyscanTarget("[127.0.0.1]:2222") == "-p 2222 127.0.0.1")
        #expect(SFTPError.keyscanTarget("backup.example.com") == "backup.example.com")
    }
}
