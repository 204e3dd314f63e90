import Foundation
import LLVSSupport
import Synchronization

/// What a mock does wrong to one request.
public enum MockFault: Sendable, Equatable {
    /// Answer with this status (and a Retry-After in seconds when given) instead of serving the request.
    case status(Int, retryAfter: Int? = nil)
    /// Serve the request, then close the connection without answering.
    case dropBeforeAnswer
    /// Answer, but close the connection halfway through the body.
    case dropMidBody
    /// Answer with the full Content-Length but send one byte less, then close.
    case truncateBody
    /// Wait this long before answering.
    case latency(Duration)
    /// Answer, but send the body this many bytes a second (a hostile or broken server that never quite stalls).
    case trickle(bytesPerSecond: Int)
    /// Answer with exactly this (a named fault: what the real service sends).
    case answer(status: Int, headers: HTTPHeaders, body: Data)
}

/// The faults a mock injects: into the nth request, into the next requests, or into a seeded fraction of them.
/// Set per test through methods, or from a spec string by `llvs-mock --faults`.
public final class MockFaults: Sendable {
    private struct State {
        var byNumber: [Int: MockFault] = [:]
        var queue: [MockFault] = []
        var randomRate = 0.0
        var randomFaults: [MockFault] = []
        var seed: UInt64 = 1
        /// How many times each request (method and path) has come, so a resend is a draw of its own.
        var attempts: [String: Int] = [:]
        var latency: Duration?
        /// Only requests whose path starts with this are counted and faulted (nil: all).
        var pathPrefix: String?
        /// Only requests with one of these methods are faulted (nil: all).
        var methods: Set<String>?
        /// Faults for the next requests a rule matches, each rule with how many more it applies to.
        var matching: [(rule: @Sendable (MockRequestSummary) -> Bool, fault: MockFault, remaining: Int)] = []
        /// Named faults in force: each with the matching requests to let pass first and how many to fault (nil:
        /// each with `rate`).
        var named: [NamedRule] = []
        /// How many times each named fault was injected (answers) or carried out (behaviors).
        var fired: [String: Int] = [:]
    }

    struct NamedRule {
        var fault: MockNamedFault
        var skip: Int
        var remaining: Int?
        var rate: Double
        var attempts: [String: Int] = [:]
    }

    private let state = Mutex(State())

    public init() {}

    /// Faults the request with this number (1 for the first the server receives).
    public func inject(_ fault: MockFault, intoRequest number: Int) { state.withLock { $0.byNumber[number] = fault } }
    /// Faults the next request to arrive (several calls queue several faults).
    public func injectNext(_ fault: MockFault) { state.withLock { $0.queue.append(fault) } }
    /// Faults queued, numbered or matched by a rule that no request has met yet (random and named faults aside).
    public var pendingCount: Int {
        state.withLock { $0.queue.count + $0.byNumber.count + $0.matching.reduce(0) { $0 + max(0, $1.remaining) } }
    }
    /// Faults a seeded fraction of requests with one of `faults`, chosen at random.
    public func injectRandomly(rate: Double, faults: [MockFault], seed: UInt64 = 1) {
        state.withLock {
            $0.randomRate = rate
            $0.randomFaults = faults
            $0.seed = seed
            $0.attempts = [:]
        }
    }
    /// Faults the next `times` requests `rule` matches, by what they are rather than by their number (which
    /// depends on how many requests came before, libcurl's own silent resends included).
    public func inject(_ fault: MockFault, times: Int = 1, where rule: @escaping @Sendable (MockRequestSummary) -> Bool)
    {
        state.withLock { $0.matching.append((rule, fault, times)) }
    }
    /// Puts a named fault in force: into the `at`th request in its scope (from 1) and the `times - 1` after it, or
    /// into each request in its scope with probability `rate` (drawn per request, from the seed).
    public func inject(_ fault: MockNamedFault, at position: Int = 1, times: Int = 1) {
        state.withLock {
            $0.named.append(NamedRule(fault: fault, skip: max(0, position - 1), remaining: max(1, times), rate: 0))
        }
    }
    public func inject(_ fault: MockNamedFault, rate: Double) {
        state.withLock { $0.named.append(NamedRule(fault: fault, skip: 0, remaining: nil, rate: rate)) }
    }

    /// How many times the named fault was injected or carried out so far.
    public func firedCount(_ name: String) -> Int { state.withLock { $0.fired[name, default: 0] } }

    /// Whether the behavior `name` (a named fault whose effect the mock carries out) meets this request; counted
    /// as fired when it does.
    public func fires(_ name: String, method: String, path: String) -> Bool {
        state.withLock { state in
            // The first rule of that name still in force: one used up earlier (a fault injected again into a running
            // mock) must not hide the new one.
            guard
                let index = state.named.firstIndex(where: {
                    $0.fault.name == name && $0.fault.effect == .behavior && $0.remaining.map { $0 > 0 } ?? true
                })
            else { return false }
            return Self.take(&state, index, MockRequestSummary(method: method, path: path, headers: [:]))
        }
    }

    /// Whether rule `index` meets the request, counting it down (or drawing it) when it does.
    private static func take(_ state: inout State, _ index: Int, _ request: MockRequestSummary) -> Bool {
        guard state.named[index].fault.scope.matches(request) else { return false }
        var rule = state.named[index]
        defer { state.named[index] = rule }
        let hit: Bool
        if let remaining = rule.remaining {
            if rule.skip > 0 {
                rule.skip -= 1
                return false
            }
            hit = remaining > 0
            if hit { rule.remaining = remaining - 1 }
        } else {
            let identity = request.method.uppercased() + " " + request.path
            let attempt = rule.attempts[identity, default: 0]
            rule.attempts[identity] = attempt + 1
            var generator = SeededGenerator(
                seed: identityHash(seed: state.seed, identity: rule.fault.name + " " + identity, attempt: attempt))
            hit = Double.random(in: 0..<1, using: &generator) < rule.rate
        }
        if hit { state.fired[rule.fault.name, default: 0] += 1 }
        return hit
    }

    public func setLatency(_ latency: Duration?) { state.withLock { $0.latency = latency } }
    public func limit(toPathsStartingWith prefix: String?) { state.withLock { $0.pathPrefix = prefix } }
    public func limit(toMethods methods: Set<String>?) { state.withLock { $0.methods = methods } }
    public func clear() { state.withLock { $0 = State() } }

    /// The answer of a named fault in force that meets this request, if one does.
    func decideNamed(_ summary: MockRequestSummary) -> MockFault? {
        state.withLock { state in
            for index in state.named.indices {
                guard case .answer(let fault) = state.named[index].fault.effect, Self.take(&state, index, summary)
                else { continue }
                return fault
            }
            return nil
        }
    }

    /// The faults for request `number` at `path` (latency first, then at most one other).
    func decide(number: Int, method: String = "GET", path: String, headers: HTTPHeaders = [:]) -> [MockFault] {
        let summary = MockRequestSummary(method: method, path: path, headers: headers)
        if let named = decideNamed(summary) { return [named] }
        return state.withLock { state in
            var faults: [MockFault] = []
            if let prefix = state.pathPrefix, !path.hasPrefix(prefix) { return [] }
            if let methods = state.methods, !methods.contains(method.uppercased()) { return [] }
            if let latency = state.latency { faults.append(.latency(latency)) }
            if let index = state.matching.firstIndex(where: { $0.remaining > 0 && $0.rule(summary) }) {
                faults.append(state.matching[index].fault)
                state.matching[index].remaining -= 1
            } else if let fault = state.byNumber.removeValue(forKey: number) {
                faults.append(fault)
            } else if !state.queue.isEmpty {
                faults.append(state.queue.removeFirst())
            } else if state.randomRate > 0, !state.randomFaults.isEmpty {
                // Drawn for the request's identity (method, path, attempt), not its place in arrival order: with many
                // transfers at once the order changes from run to run, and a seed must give the same faults anyway.
                let identity = method.uppercased() + " " + path
                let attempt = state.attempts[identity, default: 0]
                state.attempts[identity] = attempt + 1
                var generator = SeededGenerator(
                    seed: Self.identityHash(seed: state.seed, identity: identity, attempt: attempt))
                if Double.random(in: 0..<1, using: &generator) < state.randomRate {
                    faults.append(state.randomFaults[Int.random(in: 0..<state.randomFaults.count, using: &generator)])
                }
            }
            return faults
        }
    }

    /// FNV-1a of the seed, the request's identity and its attempt: the same in every process (Swift's `Hasher` is
    /// seeded per process).
    static func identityHash(seed: UInt64, identity: String, attempt: Int) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in "\(seed) \(attempt) \(identity)".utf8 { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        return hash
    }

    /// Reads a spec such as `500@3,503:0.1,429:0.05,retry-after=2,drop:0.02,drop-body@7,truncate:0.01,latency=20ms,seed=9`:
    /// `STATUS@N` fails request N, `KIND:RATE` adds a random fault, `KIND@N` puts one into request N, `KIND@METHOD*K`
    /// into the first K requests of a method (`503@MOVE*5`; without `*K`, the first); kinds are a status,
    /// `drop`, `drop-body`, `truncate` and `trickle` (the body at 2 bytes a second). `retry-after` applies to 429 and 503 answers.
    /// `catalogue`: the service's named faults; `NAME` faults the first request in its scope, `NAME@N` the Nth,
    /// `NAME*K` the first K, `NAME:RATE` each with that probability (`NAME:1`: all of them).
    public static func parse(_ spec: String, catalogue: [MockNamedFault] = []) throws -> MockFaults {
        let faults = MockFaults()
        try faults.add(spec, catalogue: catalogue)
        return faults
    }

    /// Adds the faults of a spec (as `parse` reads it) to those already here: how a running mock takes faults sent to
    /// its control path (`MockHTTPServer.faultControlPath`).
    public func add(_ spec: String, catalogue: [MockNamedFault] = []) throws {
        let faults = self
        var retryAfter: Int?
        var random: [(MockFault, Double)] = []
        var seed: UInt64 = 1
        let items = spec.split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) }
        for item in items where item.hasPrefix("retry-after=") {
            guard let value = Int(item.dropFirst("retry-after=".count)) else { throw SpecError(item) }
            retryAfter = value
        }
        func fault(_ kind: String) throws -> MockFault {
            switch kind {
            case "drop": return .dropBeforeAnswer
            case "drop-body": return .dropMidBody
            case "truncate": return .truncateBody
            case "trickle": return .trickle(bytesPerSecond: 2)
            default:
                guard let status = Int(kind), (400...599).contains(status) else { throw SpecError(kind) }
                return .status(status, retryAfter: [429, 503].contains(status) ? retryAfter : nil)
            }
        }
        for item in items where !item.hasPrefix("retry-after=") {
            let name = String(item.prefix { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" })
            if let named = catalogue[named: name] {
                let rest = item.dropFirst(name.count)
                if rest.isEmpty {
                    faults.inject(named)
                } else if rest.hasPrefix("@"), let position = Int(rest.dropFirst()), position > 0 {
                    faults.inject(named, at: position)
                } else if rest.hasPrefix("*"), let count = Int(rest.dropFirst()), count > 0 {
                    faults.inject(named, times: count)
                } else if rest.hasPrefix(":"), let rate = Double(rest.dropFirst()), (0...1).contains(rate) {
                    faults.inject(named, rate: rate)
                } else {
                    throw SpecError(item)
                }
            } else if item.hasPrefix("seed=") {
                guard let value = UInt64(item.dropFirst(5)) else { throw SpecError(item) }
                seed = value
            } else if item.hasPrefix("latency=") {
                let text = item.dropFirst(8)
                guard let milliseconds = Int(text.hasSuffix("ms") ? text.dropLast(2) : text) else {
                    throw SpecError(item)
                }
                faults.setLatency(.milliseconds(milliseconds))
            } else if let at = item.firstIndex(of: "@") {
                let target = item[item.index(after: at)...]
                if let number = Int(target) {
                    guard number > 0 else { throw SpecError(item) }
                    faults.inject(try fault(String(item[..<at])), intoRequest: number)
                } else {
                    // KIND@METHOD (the first request of that method) or KIND@METHOD*K (the first K of them).
                    let parts = target.split(separator: "*", maxSplits: 1)
                    let method = String(parts.first ?? "").uppercased()
                    let times = parts.count == 2 ? Int(parts[1]) : 1
                    guard !method.isEmpty, method.allSatisfy(\.isLetter), let times, times > 0 else {
                        throw SpecError(item)
                    }
                    faults.inject(try fault(String(item[..<at])), times: times) { $0.method.uppercased() == method }
                }
            } else if let colon = item.firstIndex(of: ":") {
                guard let rate = Double(item[item.index(after: colon)...]), (0...1).contains(rate) else {
                    throw SpecError(item)
                }
                random.append((try fault(String(item[..<colon])), rate))
            } else {
                throw SpecError(item)
            }
        }
        faults.state.withLock { $0.seed = seed }
        if !random.isEmpty {
            // One overall rate, the kinds weighted by their share of it.
            let total = min(1, random.reduce(0) { $0 + $1.1 })
            var weighted: [MockFault] = []
            for (fault, rate) in random {
                weighted += Array(repeating: fault, count: max(1, Int((rate / total * 100).rounded())))
            }
            faults.injectRandomly(rate: total, faults: weighted, seed: seed)
        }
    }

    public struct SpecError: Error, CustomStringConvertible {
        public var description: String
        init(_ item: String) { description = "cannot read the fault \"\(item)\" (see `llvs-mock --help`)" }
    }
}

/// What a fault rule sees of a request.
public struct MockRequestSummary: Sendable {
    public var method: String
    public var path: String
    public var headers: HTTPHeaders
}

/// What a mock received and how it answered, for tests to assert on.
public struct MockLogEntry: Sendable {
    public var number: Int
    public var method: String
    public var target: String
    public var headers: HTTPHeaders
    public var status: Int?
    public var faults: [MockFault]
    /// When the request arrived (uptime nanoseconds), so tests can see what a client held back and for how long.
    public var arrival: UInt64 = DispatchTime.now().uptimeNanoseconds
    /// Which connection it came on (numbered from 1 as the server accepts them), so tests can see reuse.
    public var connection = 0
}

import LLVSHTTP
