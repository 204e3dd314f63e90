import Foundation
import LLVS
import LLVSMocks
import LLVSSupport
import Testing

/// Drives a connector through every kind of request a service's named faults can meet (a folder, a small and a
/// large upload, an overwrite, a listing, a download, a removal) with one named fault in force, and checks what a
/// user must see: a transient fault is waited out and the work completes whole; a final one ends the work with an
/// error that names the service's reason, and nothing half-written is left under the name being written.
public struct NamedFaultWorkload: Sendable {
    public var folder = "named-faults"
    /// Above the connector's simple-upload limit, so upload sessions, fragments and commits are met.
    public var largeSize: Int

    public init(largeSize: Int) { self.largeSize = largeSize }

    func run(_ fileSystem: any CloudFileSystem, large: Data) async throws {
        try await fileSystem.makeFolder(folder)
        try await fileSystem.upload(Data("small".utf8), to: "\(folder)/small.txt")
        try await fileSystem.upload(large, to: "\(folder)/large.bin")
        try await fileSystem.upload(Data("small, again".utf8), to: "\(folder)/small.txt")
        // A listing may lag behind the uploads (eventual consistency, `listing-lag`), for a few listings, no more.
        var names: Set<String> = []
        for _ in 0...MockNamedFault.lagListings where names != ["small.txt", "large.bin"] {
            names = Set(try await fileSystem.list(folder).map(\.name))
        }
        guard names == ["small.txt", "large.bin"] else { throw WorkloadFailure("the folder lists \(names.sorted())") }
        guard try await fileSystem.download("\(folder)/large.bin") == large else {
            throw WorkloadFailure("large.bin came back different")
        }
        guard try await fileSystem.download("\(folder)/small.txt") == Data("small, again".utf8) else {
            throw WorkloadFailure("small.txt came back different")
        }
        try await fileSystem.removeFile("\(folder)/small.txt")
    }

    struct WorkloadFailure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }
}

/// Runs the workload with `fault` in force (a transient one once, a final one on every request it can meet) and records an
/// issue for anything a user would not accept. `finalReason`: text the error of a final fault must contain (the
/// service's reason, said so a user knows what to do). `prepare`: what makes the fault reachable (an expired access
/// token, so a refresh meets `invalid-grant`).
public func expectNamedFaultHandled(
    _ fault: MockNamedFault, fileSystem: any CloudFileSystem, faults: MockFaults,
    workload: NamedFaultWorkload, finalReason: String? = nil,
    prepare: @Sendable () -> Void = {}, sourceLocation: SourceLocation = #_sourceLocation
) async {
    let large = SeededGenerator.bytes(workload.largeSize, seed: 35)
    prepare()
    if fault.isTransient { faults.inject(fault) } else { faults.inject(fault, rate: 1) }
    var failure: (any Error)?
    do { try await workload.run(fileSystem, large: large) } catch { failure = error }
    #expect(
        faults.firedCount(fault.name) > 0, "\(fault.name) was never met: the workload does not reach it",
        sourceLocation: sourceLocation)
    faults.clear()
    if fault.isTransient {
        #expect(
            failure == nil,
            "\(fault.name) is transient and should be waited out, but: \(failure.map { "\($0)" } ?? "")",
            sourceLocation: sourceLocation)
    } else if let failure {
        if let finalReason {
            #expect(
                "\(failure)".localizedCaseInsensitiveContains(finalReason),
                "the error for \(fault.name) should say \"\(finalReason)\": \(failure)",
                sourceLocation: sourceLocation)
        }
        // Nothing half-written: a large.bin that exists is whole.
        // (The fault was cleared above, so the look itself must succeed: a failing look would hide a half file.)
        do {
            let names = try await fileSystem.list(workload.folder).map(\.name)
            if names.contains("large.bin") {
                let stored = try await fileSystem.download("\(workload.folder)/large.bin")
                #expect(
                    stored == large, "after \(fault.name), large.bin is there but not whole",
                    sourceLocation: sourceLocation)
            }
        } catch CloudFileSystemError.notFound {
            // The folder was never made: nothing half-written in it.
        } catch {
            Issue.record(
                "after \(fault.name), the folder could not be looked at: \(error)", sourceLocation: sourceLocation)
        }
    } else {
        Issue.record(
            "\(fault.name) is final, but the work went on as if nothing happened", sourceLocation: sourceLocation)
    }
}
