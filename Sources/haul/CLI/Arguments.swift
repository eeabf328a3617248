import HaulCore

/// A command line after the command name: flags, options with values, and positionals.
/// Parsing is strict: an unknown flag is a usage error that names it.
struct Arguments {
    private(set) var positionals: [String] = []
    private var values: [String: [String]] = [:]
    private var flags: Set<String> = []

    /// Parses `words` given the options that take a value and the flags that do not.
    /// `-o value`, `--name value` and `--name=value` are accepted; `--` ends option parsing.
    /// `short` maps one-letter flags to long names (`-x` to `--connections`); `-x8` and `-qv` work too.
    /// `habits` maps options of other tools that mean something else here to the line that
    /// says Haul's way (`CurlHabits.refusals`).
    init(
        _ words: [String], options: Set<String>, flags allowedFlags: Set<String>, short: [Character: String] = [:], habits: [String: String] = [:]
    ) throws {
        let words = Self.expand(words, short: short, options: options)
        var index = 0
        var onlyPositionals = false
        while index < words.count {
            let word = words[index]
            index += 1
            // A negative number (`-1`) is a value to judge, not an option nobody knows.
            if onlyPositionals || !word.hasPrefix("-") || word == "-" || Self.isNegativeNumber(word) {
                positionals.append(word)
                continue
            }
            if word == "--" {
                onlyPositionals = true
                continue
            }
            var name = word
            var inline: String?
            if let equals = word.firstIndex(of: "="), word.hasPrefix("--") {
                name = String(word[..<equals])
                inline = String(word[word.index(after: equals)...])
            }
            if options.contains(name) {
                if let inline {
                    values[name, default: []].append(inline)
                } else {
                    guard index < words.count else { throw HaulError.usage("\(name) needs a value") }
                    values[name, default: []].append(words[index])
                    index += 1
                }
            } else if allowedFlags.contains(name), inline == nil {
                flags.insert(name)
            } else if let habit = habits[name] {
                throw HaulError.usage(habit)
            } else {
                let hint = Suggestion.hint(for: name, among: Array(options) + Array(allowedFlags) + ["--help"])
                throw HaulError.usage("unknown option '\(name)'", hint: (hint.isEmpty ? "" : hint + " ") + "see --help for the options this command takes")
            }
        }
    }

    /// `-` and digits only (`-1`, `-30`): no option is spelled so.
    static func isNegativeNumber(_ word: String) -> Bool {
        word.count >= 2 && word.hasPrefix("-") && word.utf8.dropFirst().allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
    }

    /// Rewrites short flags to their long names: `-x8` → `--connections 8`, `-qv` → `--quiet --verbose`.
    /// Words after `--` and words that are not `-` plus letters are left alone.
    static func expand(_ words: [String], short: [Character: String], options: Set<String>) -> [String] {
        guard !short.isEmpty else { return words }
        var result: [String] = []
        var index = 0
        while index < words.count {
            let word = words[index]
            index += 1
            if word == "--" {
                result += words[(index - 1)...]
                break
            }
            guard word.count >= 2, word.hasPrefix("-"), !word.hasPrefix("--"), let letter = word.dropFirst().first, let long = short[letter] else {
                result.append(word)
                if let long = result.last, options.contains(long), index < words.count {
                    result.append(words[index])  // an option's value is never read as flags
                    index += 1
                }
                continue
            }
            let rest = String(word.dropFirst(2))
            result.append(long)
            if options.contains(long) {
                if !rest.isEmpty {
                    result.append(rest)
                } else if index < words.count {
                    result.append(words[index])
                    index += 1
                }
            } else if !rest.isEmpty {
                result += rest.map { short[$0] ?? "-\($0)" }
            }
        }
        return result
    }

    /// The last value given for an option.
    func value(_ name: String) -> String? { values[name]?.last }

    /// Every value given for a repeatable option, in order.
    func all(_ name: String) -> [String] { values[name] ?? [] }

    /// Whether a flag was given.
    func has(_ name: String) -> Bool { flags.contains(name) }

    /// A positive whole number option.
    func positiveInt(_ name: String) throws -> Int? {
        guard let text = value(name) else { return nil }
        guard let number = Int(text), number > 0 else {
            throw HaulError.usage("\(name) '\(text)' is not a positive whole number")
        }
        return number
    }

    /// A whole number option (may be negative).
    func int(_ name: String) throws -> Int? {
        guard let text = value(name) else { return nil }
        guard let number = Int(text) else { throw HaulError.usage("\(name) '\(text)' is not a whole number") }
        return number
    }

    /// A size option such as `8MiB`.
    func size(_ name: String) throws -> Int64? {
        try value(name).map { try ByteSize.parse($0, flag: name) }
    }

    /// A duration option such as `30s` or `1h30m`, in seconds.
    func duration(_ name: String, allowZero: Bool = false) throws -> Double? {
        try value(name).map { try Duration.parseSeconds($0, flag: name, allowZero: allowZero) }
    }

    /// Exactly `count` positionals, or a usage error that says what was expected.
    func expect(_ count: Int, _ what: String) throws -> [String] {
        guard positionals.count == count else {
            throw HaulError.usage(positionals.count < count ? "missing \(what)" : "unexpected argument '\(positionals[count])'", hint: "see --help")
        }
        return positionals
    }
}
