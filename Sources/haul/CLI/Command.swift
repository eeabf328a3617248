import Foundation
import HaulCore

/// One `haul` subcommand: its help text and what it does. Returns the process's exit status.
protocol Command {
    /// The word after `haul`.
    static var name: String { get }
    /// One line for `haul --help`.
    static var summary: String { get }
    /// The full `haul NAME --help` text.
    static var help: String { get }
    /// Runs with the words after the command name.
    static func run(_ words: [String]) throws -> Int32
}

/// Writing to standard output and standard error.
enum Output {
    /// Prints a line to standard output.
    static func line(_ text: String) {
        StandardStream.write(text + "\n", to: 1)
    }

    /// Prints a line to standard error.
    static func error(_ text: String) {
        StandardStream.write(text + "\n", to: 2)
    }

    /// Prints a JSON value (dictionary or array) on one line, keys sorted.
    static func json(_ value: Any) {
        line(jsonText(value))
    }

    /// A JSON value as `json(_:)` prints it, without the line's end: a part of a longer line.
    static func jsonText(_ value: Any) -> String {
        let data = (try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data("null".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    /// `text` padded with spaces to a table column `width` wide (a longer one keeps a space after it).
    static func cell(_ text: String, _ width: Int) -> String {
        text.count >= width ? text + " " : text + String(repeating: " ", count: width - text.count)
    }

    /// Whether standard error is a terminal (progress bars) or a pipe/file (log lines).
    static var stderrIsTerminal: Bool { isatty(2) == 1 }
}

/// The exit statuses `haul` uses most (all of them, and which error code gives which, are in
/// `ExitStatus`).
enum ExitCode {
    static let success = ExitStatus.success
    static let failure = ExitStatus.failure
    static let usage = ExitStatus.usage
    static let interrupted = ExitStatus.interrupted
}
