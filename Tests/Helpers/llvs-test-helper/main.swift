import Foundation
import LLVS
import LLVSHTTP
import LLVSProjection
import LLVSSQLite
import Synchronization

// A child process for tests that need more than one process.
//
//   llvs-test-helper save-loop STORE PREFIX COUNT [VALUE-BYTES]
//
// Opens the store at STORE and saves COUNT versions in a chain of its own, each inserting the value
// PREFIX-i, printing "saved i <version-id>" after each save returns. Tests kill it mid-save or run two at once.
//
//   llvs-test-helper refresh TOKEN-FILE TOKEN-URL CLIENT-ID CLIENT-SECRET START-AT
//
// Waits until START-AT (seconds since 1970), then asks a token source on TOKEN-FILE for a token (refreshing the
// expired one through TOKEN-URL) and prints the access token it ends with. Two at once test the token file lock.
//
//   llvs-test-helper open URL
//
// Fetches URL following redirects, as a browser would: set as $BROWSER, it completes `llvs auth`'s loopback flow
// against a mock whose authorize endpoint redirects at once.

//
//   llvs-test-helper location URL
//
// Prints where URL redirects to, without following (the address a headless user copies from the browser).
//
//   llvs-test-helper project STORE DATABASE PAUSE-AFTER
//
// Projects the current version of STORE's coordinator into DATABASE (a table `contacts` of the values
// "<id>/Contact": first_name, city); after PAUSE-AFTER values it prints "paused after N" and waits on its standard
// input, inside the pass's transaction, for the test to kill it.

let arguments = CommandLine.arguments
if arguments.count == 5, arguments[1] == "project", let pauseAfter = Int(arguments[4]) {
    struct Contact: Decodable { var firstName: String; var city: String }
    final class Countdown: Sendable { let seen = Mutex(0) }
    let countdown = Countdown()
    let contacts = ProjectedType(
        typeIdentifier: "Contact", tableName: "contacts",
        columns: [
            ProjectedColumn(name: "first_name", declaration: "TEXT"),
            ProjectedColumn(name: "city", declaration: "TEXT"),
        ]
    ) { value in
        if countdown.seen.withLock({
            $0 += 1; return $0
        }) == pauseAfter + 1 {
            FileHandle.standardOutput.write(Data("paused after \(pauseAfter)\n".utf8))
            _ = FileHandle.standardInput.readDataToEndOfFile()
        }
        let contact = try JSONDecoder().decode(Contact.self, from: value.data)
        return ["first_name": .text(contact.firstName), "city": .text(contact.city)]
    }
    let coordinator = try StoreCoordinator(store: try Store(rootDirectoryURL: URL(fileURLWithPath: arguments[2])))
    let follower = try ProjectionFollower(
        databaseURL: URL(fileURLWithPath: arguments[3]), coordinator: coordinator, types: [contacts])
    try await follower.projectCurrentVersion()
    exit(0)
}
if arguments.count == 3, arguments[1] == "location", let url = URL(string: arguments[2]) {
    var request = HTTPRequest(url: url)
    request.followsRedirects = false
    let response = try await HTTPClient().send(request)
    guard let location = response.headers["Location"] else { exit(1) }
    print(location)
    exit(0)
}
if arguments.count == 3, arguments[1] == "open", let url = URL(string: arguments[2]) {
    let response = try await HTTPClient().send(HTTPRequest(url: url))
    exit(response.isSuccess ? 0 : 1)
}
if arguments.count == 7, arguments[1] == "refresh" {
    // refresh TOKEN-FILE TOKEN-URL CLIENT-ID SECRET BARRIER: says "ready", waits until the test creates BARRIER (so
    // two helpers start together), says "attempting" as it asks for a token, and prints the token it got with when it
    // started and ended (uptime seconds).
    let configuration = OAuthConfiguration(
        authorizationURL: URL(string: arguments[3])!, tokenURL: URL(string: arguments[3])!,
        clientId: arguments[4], clientSecret: arguments[5])
    // The test holds the token endpoint's answer until both helpers are asking, however long the other takes to
    // start on a loaded machine: a stall timeout shorter than that wait would abandon a refresh the server carried out
    // and send the spent single-use refresh token again (invalid_grant), which is what this test must not measure.
    var http = HTTPClientConfiguration()
    http.stallTimeout = .seconds(3600)
    let source = OAuthTokenSource(
        file: TokenFile(path: arguments[2]), configuration: configuration,
        http: HTTPClient(configuration: http), reauthorizeCommand: "llvs auth test")
    FileHandle.standardOutput.write(Data("ready\n".utf8))
    while !FileManager.default.fileExists(atPath: arguments[6]) { usleep(500) }
    let started = ProcessInfo.processInfo.systemUptime
    FileHandle.standardOutput.write(Data("attempting\n".utf8))
    do {
        let token = try await source.token()
        let ended = ProcessInfo.processInfo.systemUptime
        FileHandle.standardOutput.write(Data("\(token.accessToken) \(started) \(ended)\n".utf8))
        exit(0)
    } catch {
        FileHandle.standardError.write(Data("llvs-test-helper: \(error)\n".utf8))
        exit(1)
    }
}
guard arguments.count >= 5, arguments[1] == "save-loop", let count = Int(arguments[4]) else {
    FileHandle.standardError.write(Data("usage: llvs-test-helper save-loop STORE PREFIX COUNT [VALUE-BYTES]\n".utf8))
    exit(2)
}
let size = arguments.count > 5 ? Int(arguments[5]) ?? 1024 : 1024
do {
    let store = try Store(openingAt: URL(fileURLWithPath: arguments[2]), makeStorage: SQLiteStorage.storageMaker)
    var previous: Version.ID?
    for i in 0..<count {
        let data = Data(repeating: UInt8(i % 251), count: size)
        let version = try store.makeVersion(
            basedOnPredecessor: previous, inserting: [Value(id: "\(arguments[3])-\(i)", data: data)])
        previous = version.id
        FileHandle.standardOutput.write(Data("saved \(i) \(version.id)\n".utf8))
    }
} catch {
    FileHandle.standardError.write(Data("llvs-test-helper: \(error)\n".utf8))
    exit(1)
}
