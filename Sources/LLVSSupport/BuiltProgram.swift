import Foundation

/// Where one of this package's programs was built, for the tests that run it: beside the test bundle (`swift test`
/// builds the executables the tests depend on there), else in `.build/debug` of the package the calling file is in.
package enum BuiltProgram {
    package static func url(_ name: String, calledFrom filePath: String = #filePath) -> URL {
        let candidates = [
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(),
            Bundle.main.bundleURL.deletingLastPathComponent(),
            Bundle.main.bundleURL,
        ]
        for folder in candidates {
            let url = folder.appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        }
        return packageRoot(of: filePath).appendingPathComponent(".build/debug/\(name)")
    }

    /// The nearest folder above `filePath` that holds a `Package.swift`.
    package static func packageRoot(of filePath: String = #filePath) -> URL {
        var folder = URL(fileURLWithPath: filePath).deletingLastPathComponent()
        while folder.path != "/" {
            if FileManager.default.fileExists(atPath: folder.appendingPathComponent("Package.swift").path) {
                return folder
            }
            folder.deleteLastPathComponent()
        }
        return URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
    }
}
