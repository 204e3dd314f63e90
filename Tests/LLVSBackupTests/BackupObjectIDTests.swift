import Foundation
import LLVS
import Testing

@testable import LLVSBackup

/// `namesObject`, the allocation-free test a prune asks of every map entry, says exactly what `chunkHash` and
/// `listingHash` say.
@Suite struct BackupObjectIDTests {
    @Test func namesObjectAgreesWithTheHashesTheIDsName() {
        let hash = ContentHash(of: Data("some bytes".utf8))
        let hex = hash.hex
        let ids: [Value.ID] = [
            BackupObjectID.chunk(hash), BackupObjectID.tree(hash), BackupObjectID.source("home"),
            Value.ID(".llvs-backup/chunk/" + hex.uppercased()), Value.ID(".llvs-backup/chunk/" + hex.dropLast()),
            Value.ID(".llvs-backup/tree/" + hex + "0"), Value.ID(".llvs-backup/chunkx" + hex), Value.ID("chunk/" + hex),
            Value.ID(".llvs-backup/chunk/" + hex.dropLast() + "g"), Value.ID(""), Value.ID("an app's value"),
        ]
        for id in ids {
            let expected = BackupObjectID.chunkHash(in: id) != nil || BackupObjectID.listingHash(in: id) != nil
            #expect(BackupObjectID.namesObject(id) == expected, "\(id.rawValue)")
        }
        #expect(BackupObjectID.namesObject(BackupObjectID.chunk(hash)))
        #expect(!BackupObjectID.namesObject(BackupObjectID.source("home")))
    }
}
