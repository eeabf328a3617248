import Foundation
import HaulTestSupport

/// The SHA-256 of a file as lower-case hex, computed by coreutils' `sha256sum` reading stdin
/// (given a name with a backslash, it would prefix its output with one).
func sha256(ofFile path: String) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/sha256sum")
    process.standardInput = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return String(String(decoding: data, as: UTF8.self).prefix(64))
}
