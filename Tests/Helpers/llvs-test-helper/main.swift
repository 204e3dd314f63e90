import Foundation
import LLVS
import LLVSSQLite

// A child process for the store's crash and sharing tests.
//
//   llvs-test-helper save-loop STORE PREFIX COUNT [VALUE-BYTES]
//
// Opens the store at STORE and saves COUNT versions in a chain of its own, each inserting the value
// PREFIX-i, printing "saved i <version-id>" after each save returns. Tests kill it mid-save or run two at once.


let arguments = CommandLine.arguments
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
        let version = try store.makeVersion(basedOnPredecessor: previous, inserting: [Value(id: "\(arguments[3])-\(i)", data: data)])
        previous = version.id
        FileHandle.standardOutput.write(Data("saved \(i) \(version.id)\n".utf8))
    }
} catch {
    FileHandle.standardError.write(Data("llvs-test-helper: \(error)\n".utf8))
    exit(1)
}
