import Foundation

/// The logins of a netrc file (`--netrc`, `--netrc-file`), read as curl reads them, so that a
/// password need not be on the command line (`user:password@` in a URL is shown by `ps` to
/// every local user). Pure.
///
/// Tokens are separated by blanks and line ends; a token may be double-quoted (with `\"`, `\\`,
/// `\n`, `\r`, `\t` escapes). `machine NAME` starts a host's entry and `default` the entry for
/// every other host; `login` and `password` fill the entry, `account` is skipped, and `macdef
/// NAME` skips a macro: the rest of its line and the lines after it up to a blank one. A line
/// whose first token starts with `#` is a comment.
public struct Netrc: Sendable, Equatable {
    /// One `machine` (or `default`) entry.
    public struct Entry: Sendable, Equatable {
        /// The host it is for; `nil` for `default`.
        public var machine: String?
        /// The user name; empty when the entry has none.
        public var login: String
        /// The password; empty when the entry has none.
        public var password: String

        /// An entry.
        public init(machine: String?, login: String = "", password: String = "") {
            self.machine = machine
            self.login = login
            self.password = password
        }

        /// The `Authorization` header value of this login (HTTP Basic, as libcurl sends it).
        public var basicAuthorization: String {
            "Basic " + Data("\(login):\(password)".utf8).base64EncodedString()
        }
    }

    /// The entries in the file's order.
    public var entries: [Entry]

    /// The entries of a netrc file's `text`.
    public init(parsing text: String) {
        entries = []
        var pending: String?  // a keyword waiting for its value
        var inMacro = false
        for line in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline) {
            let tokens = Self.tokens(of: line)
            if inMacro {
                if tokens.isEmpty { inMacro = false }
                continue
            }
            if pending == nil, tokens.first?.hasPrefix("#") == true { continue }
            for token in tokens {
                if let keyword = pending {
                    pending = nil
                    switch keyword {
                    case "machine": entries.append(Entry(machine: token))
                    case "login": if !entries.isEmpty { entries[entries.count - 1].login = token }
                    case "password": if !entries.isEmpty { entries[entries.count - 1].password = token }
                    case "macdef": inMacro = true
                    default: break  // account
                    }
                    if inMacro { break }
                    continue
                }
                switch token {
                case "machine", "login", "password", "account", "macdef": pending = token
                case "default": entries.append(Entry(machine: nil))
                default: break
                }
            }
        }
    }

    /// The entry for `host`: the first `machine` naming it (case-insensitively), else `default`.
    /// With `login` (a URL's `user@` without a password), only an entry of that login counts, as
    /// curl looks up the password of the user a URL names.
    public func entry(for host: String, login: String? = nil) -> Entry? {
        let host = host.lowercased()
        let candidates = login.map { login in entries.filter { $0.login == login } } ?? entries
        return candidates.first { $0.machine?.lowercased() == host } ?? candidates.first { $0.machine == nil }
    }

    /// The tokens of one line, quotes and escapes resolved.
    static func tokens(of line: Substring) -> [String] {
        var tokens: [String] = []
        var current = ""
        var inToken = false
        var quoted = false
        var escaped = false
        for character in line {
            if quoted {
                if escaped {
                    escaped = false
                    switch character {
                    case "n": current.append("\n")
                    case "r": current.append("\r")
                    case "t": current.append("\t")
                    default: current.append(character)
                    }
                } else if character == "\\" {
                    escaped = true
                } else if character == "\"" {
                    quoted = false
                } else {
                    current.append(character)
                }
            } else if character == " " || character == "\t" {
                if inToken { tokens.append(current) }
                current = ""
                inToken = false
            } else if character == "\"" && !inToken {
                quoted = true
                inToken = true
            } else {
                current.append(character)
                inToken = true
            }
        }
        if inToken { tokens.append(current) }
        return tokens
    }
}
