import Foundation
import LLVS
import LLVSHTTP
import LLVSMocks
import LLVSSupport
import Testing

struct KitItem: MockTreeItem {
    var id: String
    var name: String
    var parents: [String]
    var isFolder: Bool
    var trashed = false
    var content: MockContent?
}

@Suite struct MockKitTests {
    /// Seeded faults are drawn per request (method, path, attempt), so a seed gives the same faults whatever order
    /// concurrent requests arrive in, and a resend of a request is a draw of its own.
    @Test func seededFaultsFollowTheRequestNotItsPlaceInArrivalOrder() async throws {
        func faults(order: [Int]) async throws -> [String: [String]] {
            let server = try MockHTTPServer(faults: try MockFaults.parse("503:0.5,seed=21")) { _ in .text(200, "ok") }
            defer { server.stop() }
            var configuration = HTTPClientConfiguration()
            configuration.retryPolicy = RetryPolicy(maximumAttempts: 1, sleep: { _ in })
            let http = HTTPClient(configuration: configuration)
            for index in order {
                for _ in 0..<2 {
                    _ = try? await http.send(HTTPRequest(url: server.baseURL.appendingPathComponent("r\(index)")))
                }
            }
            return Dictionary(grouping: server.log, by: \.target).mapValues { $0.map { "\($0.faults)" } }
        }
        let forward = try await faults(order: Array(0..<30))
        let backward = try await faults(order: Array((0..<30).reversed()))
        #expect(forward == backward)
        let faulted = forward.values.flatMap { $0 }.filter { $0 != "[]" }.count
        #expect((15...45).contains(faulted), "about half of 60 requests are faulted: \(faulted)")
    }

    /// A running mock takes faults at its control path: a spec it reads is added (204), one it cannot is refused with
    /// why and the service's named faults (400); the control requests are neither numbered nor logged, and a named
    /// fault given twice in a row is met twice.
    @Test func faultsPostedToARunningMockAreMetByTheNextRequests() async throws {
        let server = try MockHTTPServer(faultCatalogue: MockWebDAVServer.namedFaults) { _ in .text(201, "made") }
        defer { server.stop() }
        var configuration = HTTPClientConfiguration()
        configuration.retryPolicy = RetryPolicy(maximumAttempts: 1, sleep: { _ in })
        let http = HTTPClient(configuration: configuration)
        let control = server.baseURL.appendingPathComponent("llvs-mock/faults")
        func post(_ spec: String) async throws -> HTTPResponse {
            try await http.send(HTTPRequest(method: "POST", url: control, body: .data(Data(spec.utf8))))
        }
        let refused = try await post("nonsense")
        #expect(refused.status == 400)
        #expect(String(decoding: refused.body, as: UTF8.self).contains("the named faults here: insufficient-storage"))
        for _ in 0..<2 {
            #expect(try await post("locked").status == 204)
            let put = try await http.send(
                HTTPRequest(
                    method: "PUT", url: server.baseURL.appendingPathComponent("a.txt"), body: .data(Data("a".utf8))))
            #expect(put.status == 423)
        }
        #expect(try await post("503@GET").status == 204)
        #expect(try await http.send(HTTPRequest(url: server.baseURL.appendingPathComponent("b"))).status == 503)
        #expect(try await http.send(HTTPRequest(url: server.baseURL.appendingPathComponent("b"))).status == 201)
        #expect(server.log.map(\.number) == [1, 2, 3, 4])
        #expect(!server.log.contains { $0.target.contains("llvs-mock") })
    }

    @Test func theTreeIndexesNamesByTheServicesCaseRuleAndLogsChanges() {
        var tree = MockItemTree(
            root: KitItem(id: "0", name: "", parents: [], isFolder: true), caseInsensitiveNames: true)
        tree.insert(KitItem(id: "1", name: "Docs", parents: ["0"], isFolder: true))
        tree.insert(KitItem(id: "2", name: "a.txt", parents: ["1"], isFolder: false, content: .data(Data("abc".utf8))))
        #expect(tree.children(of: "0", named: "docs").map(\.id) == ["1"])
        #expect(tree.path(of: "2") == "Docs/a.txt")
        #expect(tree.usage == 3)
        tree.update("2") {
            $0.name = "B.txt"; $0.content = .data(Data("abcde".utf8))
        }
        #expect(tree.usage == 5, "a replaced file counts at its new size")
        #expect(tree.children(of: "1", named: "a.txt").isEmpty)
        #expect(tree.children(of: "1", named: "b.TXT").map(\.id) == ["2"])
        tree.update("1") { $0.trashed = true }
        #expect(tree.isTrashed("2"), "inside a trashed folder")
        #expect(tree.livePaths.isEmpty)
        #expect(tree.remove("1").map(\.id).sorted() == ["1", "2"])
        #expect(tree.changes.suffix(2).allSatisfy { $0.removed })
        #expect(tree.latestChange["2"] != nil)
        #expect(tree.usage == 0, "removed files hold nothing")
        tree.restore(KitItem(id: "3", name: "c", parents: ["0"], isFolder: false, content: .data(Data("xy".utf8))))
        #expect(tree.usage == 2)
        let exact = MockItemTree(
            root: KitItem(id: "0", name: "", parents: [], isFolder: true), caseInsensitiveNames: false)
        #expect(exact.children(of: "0", named: "x").isEmpty)
    }

    @Test func aFoldersSizeIsEverythingLiveBelowIt() {
        var tree = MockItemTree(
            root: KitItem(id: "0", name: "", parents: [], isFolder: true), caseInsensitiveNames: false)
        tree.insert(KitItem(id: "1", name: "a", parents: ["0"], isFolder: false, content: .data(Data("abcde".utf8))))
        tree.insert(KitItem(id: "2", name: "Inner", parents: ["0"], isFolder: true))
        tree.insert(KitItem(id: "3", name: "b", parents: ["2"], isFolder: false, content: .data(Data("1234567".utf8))))
        #expect(tree.liveSize(of: "0") == 12)
        #expect(tree.liveSize(of: "2") == 7)
        tree.update("2") { $0.trashed = true }
        #expect(tree.liveSize(of: "0") == 5, "trashed items are not counted")
        #expect(tree.usage == 12, "trashed files still take room until they are removed")
    }

    /// Pages of a folder's live children join up to the whole list, in creation order, trashed ones left out
    /// wherever they fall, with the same total on every page.
    @Test func pagesOfLiveChildrenJoinUpToTheWholeList() {
        var tree = MockItemTree(
            root: KitItem(id: "0", name: "", parents: [], isFolder: true), caseInsensitiveNames: false)
        for index in 1...25 { tree.insert(KitItem(id: "\(index)", name: "f\(index)", parents: ["0"], isFolder: false)) }
        tree.insert(KitItem(id: "x", name: "elsewhere", parents: ["1"], isFolder: false))
        for trashed in ["1", "7", "8", "25"] { tree.update(trashed) { $0.trashed = true } }
        let live = tree.children(of: "0").filter { !$0.trashed }.map(\.id)
        #expect(live.count == 21)
        for limit in [1, 4, 7, 21, 100] {
            var joined: [String] = []
            var start = 0
            while true {
                let (page, total) = tree.liveChildren(of: "0", from: start, limit: limit)
                #expect(total == 21)
                joined += page.map(\.id)
                start += page.count
                if page.count < limit { break }
            }
            #expect(joined == live, "pages of \(limit)")
        }
        #expect(tree.liveChildren(of: "0", from: 30, limit: 5).page.isEmpty)
        #expect(tree.liveChildren(of: "missing", from: 0, limit: 5).total == 0)
    }

    @Test func aTimeFromTheTreesClockIsAlwaysLaterThanTheLast() {
        var tree = MockItemTree(
            root: KitItem(id: "0", name: "", parents: [], isFolder: true), caseInsensitiveNames: false)
        let times = (0..<100).map { _ in tree.tick() }
        #expect(zip(times, times.dropFirst()).allSatisfy { $0 < $1 })
    }

    /// Box parts and pCloud writes may arrive out of order: `received` counts only bytes without a gap before them,
    /// and a piece sent twice changes nothing.
    @Test func sessionsTakePiecesAtAnyOffset() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("llvs-kit-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var sessions = MockUploadSessions<String>()
        var session = sessions.open("file", total: 30, in: directory)
        try session.write(.data(Data(repeating: 2, count: 10)), at: 10)
        #expect(session.received == 0)
        try session.write(.data(Data(repeating: 1, count: 10)), at: 0)
        #expect(session.received == 20)
        try session.write(.data(Data(repeating: 1, count: 10)), at: 0)
        try session.write(.data(Data(repeating: 3, count: 10)), at: 20)
        #expect(session.received == 30)
        #expect(session.bytesSent == 40)
        switch session.content(total: 30) {
        case .data(let data):
            #expect(
                data == Data(repeating: 1, count: 10) + Data(repeating: 2, count: 10) + Data(repeating: 3, count: 10))
        case .spooled: Issue.record("a small upload is kept in memory")
        }
        sessions["x"] = nil
        sessions.piecesUntilExpiry = 1
        sessions.pieceStored()
        #expect(sessions.sessions.values.allSatisfy { $0.expired })
    }
}
