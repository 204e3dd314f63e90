import Foundation
import LLVSCodecs
import LLVSSupport
#if canImport(Glibc)
import Glibc
#endif

extension FileStorage {
    /// A compacted pack smaller than this is taken into the next compaction with the new versions, so that a store
    /// pruned often does not gather many small packs.
    static let smallCompactedPack: Int64 = 16 << 20

    /// Moves the kept records of `versions` (the store's history) into one new compacted pack and removes the files
    /// they were in: every version file, every pack all of whose versions are given, and every compacted pack that is
    /// small or has a fifth of its bytes released since. Versions this process has not loaded are left where they are.
    public func compact(versions ids: [Version.ID], released: Set<RecordLocation>) throws -> StorageCompaction {
        var releasedByVersion: [Version.ID: [Int64: Int64]] = [:]
        for location in released {
            releasedByVersion[location.versionId, default: [:]][location.offset] = location.length
        }
        let plan = try sources(of: ids, releasedByVersion: releasedByVersion)
        var report = StorageCompaction()
        guard !plan.versions.isEmpty else {
            try remove(plan.staleFiles, versions: [], report: &report)
            return report
        }
        let name = UUID.drawn().uuidString + Self.compactedPackExtension
        let path = packsPath + "/" + name
        let output = try AtomicFileWriter(destination: path)
        do {
            var writer = CompactedPackWriter(output: output)
            try writer.start()
            for id in plan.versions {
                try copy(id, releasedByVersion[id] ?? [:], into: &writer)
            }
            try writer.writeMapFrames { location in try readStoredRecords(at: [location], zone: .map)[0] }
            let directory = try writer.finish()
            try output.commit(replacing: false, durable: true)
            register(directory, at: path)
            loadedNames.withLock { _ = $0.insert(name) }
        } catch {
            output.discard()
            throw error
        }
        packed.withLock { packed in
            for id in plan.versions { packed.removeValue(forKey: id) }
        }
        report.versions = plan.versions.count
        report.bytesAfter = POSIX.allocatedBytes(path)
        try remove(plan.files + plan.staleFiles, versions: plan.versions, report: &report)
        return report
    }

    private struct Plan {
        var versions: [Version.ID] = []
        /// Files whose every version is in `versions`.
        var files: [String] = []
        var staleFiles: [String] = []
    }

    /// Which versions to move, and the files that go once they are moved.
    private func sources(of ids: [Version.ID], releasedByVersion: [Version.ID: [Int64: Int64]]) throws -> Plan {
        let given = Set(ids)
        let compactedNow = compacted.withLock { $0 }
        let packedNow = packed.withLock { $0 }
        var packMembers: [String: [Version.ID]] = [:]
        for (id, version) in compactedNow { packMembers[version.pack.path, default: []].append(id) }
        var redone = Set<String>()
        var redoneLarge = false
        for (path, members) in packMembers where members.allSatisfy(given.contains) {
            var releasedBytes: Int64 = 0
            for id in members {
                guard let version = compactedNow[id], let releasedHere = releasedByVersion[id] else { continue }
                for record in version.records where releasedHere[record.offset] != nil {
                    if case .direct = record.placement {
                        releasedBytes += Int64(RecordFraming.recordHeaderSize) + record.length
                    }
                }
            }
            let size = POSIX.allocatedBytes(path)
            if size < Self.smallCompactedPack || releasedBytes * Self.recompactionShare >= size {
                redone.insert(path)
                redoneLarge = redoneLarge || size >= Self.smallCompactedPack
            }
        }
        var bundlePacks: [String: [Version.ID]] = [:]
        for (id, place) in packedNow where compactedNow[id] == nil { bundlePacks[place.pack, default: []].append(id) }
        let wholePacks = Set(bundlePacks.filter { $0.value.allSatisfy(given.contains) }.keys)
        var plan = Plan()
        var newVersions = 0
        for id in ids {
            if let version = compactedNow[id] {
                if redone.contains(version.pack.path) { plan.versions.append(id) }
            } else if let place = packedNow[id] {
                if wholePacks.contains(place.pack) {
                    plan.versions.append(id)
                    newVersions += 1
                }
            } else if POSIX.fileExists(path(for: id)) {
                plan.versions.append(id)
                plan.files.append(path(for: id))
                newVersions += 1
            }
        }
        plan.staleFiles = Array(stale.withLock { $0 })
        // A small pack alone is not worth writing again: only with new versions, or with what was released in it.
        guard newVersions > 0 || redoneLarge else { return Plan(staleFiles: plan.staleFiles) }
        plan.files += wholePacks.sorted() + redone.sorted()
        return plan
    }

    /// Copies one version's records into the pack being written.
    private func copy(
        _ id: Version.ID, _ releasedHere: [Int64: Int64], into writer: inout CompactedPackWriter
    ) throws {
        switch try locate(id) {
        case .compacted(let version, let file):
            try writer.beginVersion(version.header, recordsLength: version.recordsLength)
            for record in version.records {
                let location = RecordLocation(versionId: id, offset: record.offset, length: record.length)
                switch record.placement {
                case .released:
                    writer.addReleased(record.offset, length: record.length, zone: record.zone)
                case .direct(let start):
                    if releasedHere[record.offset] != nil {
                        writer.addReleased(record.offset, length: record.length, zone: record.zone)
                    } else {
                        try writer.copyValue(record.offset, length: record.length, from: file, at: start)
                    }
                case .framed(_, _, let crc32, let encoding):
                    let stored = try readCompacted([location], of: version, file: file, zone: .map)[0]
                    writer.addMapNode(location, plain: stored.bytes, crc32: crc32, encoding: encoding)
                }
            }
        case .bundle(let file, let base, let limit):
            try copy(id, bundleIn: file, base: base, limit: limit, releasedHere, into: &writer)
        }
    }

    /// Copies the records of a version's bundle at `base`..`limit` of `file`, walking its frames in order.
    private func copy(
        _ id: Version.ID, bundleIn file: ReadableFile, base: Int64, limit: Int64, _ releasedHere: [Int64: Int64],
        into writer: inout CompactedPackWriter
    ) throws {
        let (header, recordsLength) = try VersionBundle.readHeader(size: limit - base, source: file.path) {
            offset, count in try file.read(at: base + offset, count: count)
        }
        guard header.version.id == id else {
            throw StoreError.corruptFile(path: file.path, reason: "it holds version \(header.version.id), not \(id)")
        }
        try writer.beginVersion(header, recordsLength: recordsLength)
        let headerSize = Int64(RecordFraming.recordHeaderSize)
        var offset: Int64 = 0
        while offset < recordsLength {
            if let length = releasedHere[offset] {
                writer.addReleased(offset, length: length, zone: .values)
                offset += headerSize + length
                continue
            }
            guard recordsLength - offset >= headerSize else {
                throw StoreError.corruptFile(
                    path: file.path, reason: "a record header at offset \(offset) runs into the version header")
            }
            var reader = ByteReader(try file.read(at: base + offset, count: Int(headerSize)))
            let tag = try reader.byte()
            let length = Int64(try reader.uint32())
            guard let (zone, _) = RecordFraming.parse(tag: tag), offset + headerSize + length <= recordsLength else {
                throw StoreError.corruptFile(
                    path: file.path,
                    reason:
                        "the record of version \(id) at offset \(offset) is damaged or released without being listed")
            }
            let location = RecordLocation(versionId: id, offset: offset, length: length)
            if zone == .values {
                try writer.copyValue(offset, length: length, from: file, at: base + offset)
            } else {
                let stored = try readNearby([location], in: file, zone: .map) { _ in base + offset }[0]
                writer.addMapNode(
                    location, plain: try stored.decoded(), crc32: stored.bytes.withUnsafeBytes { CRC32.checksum($0) },
                    encoding: stored.encoding)
            }
            offset += headerSize + length
        }
    }

    /// Removes files a compaction replaced, durably, and lets go of them here.
    private func remove(_ files: [String], versions: [Version.ID], report: inout StorageCompaction) throws {
        var folders = Set<String>()
        for file in Set(files) {
            report.bytesBefore += POSIX.allocatedBytes(file)
            guard unlink(file) == 0 || errno == ENOENT else {
                throw FileError.io(path: file, operation: "remove a compacted file", errno: errno)
            }
            folders.insert(POSIX.folderAndName(file).folder)
            report.replacedFiles += 1
        }
        for folder in folders { try POSIX.syncDirectory(folder) }
        stale.withLock { $0.subtract(files) }
        closeRemoved(versions: versions, packs: files.filter { $0.hasPrefix(packsPath + "/") })
    }
}
