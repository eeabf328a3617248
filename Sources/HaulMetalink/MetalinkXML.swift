import HaulCore

/// One element of a Metalink document: its local name (any `prefix:` dropped), attributes,
/// text and children.
struct XMLNode: Sendable, Equatable {
    var name: String
    var attributes: [String: String] = [:]
    var text = ""
    var children: [XMLNode] = []

    /// The children named `name`.
    func children(_ name: String) -> [XMLNode] { children.filter { $0.name == name } }

    /// The text of the first child named `name`, trimmed.
    func value(_ name: String) -> String? { children.first { $0.name == name }?.text.trimmingWhitespace() }
}

/// A small XML reader for Metalink documents, in the manner of `S3XML`: no XML library, and
/// nothing an attacker can make it expand or fetch. A DOCTYPE (and so any entity declaration)
/// is refused outright, as is any entity reference but the five predefined ones and numeric
/// character references; nesting is held to `maxDepth` and the element count to `maxElements`.
/// Pure.
enum MetalinkXML {
    static let maxDepth = 32
    static let maxElements = 2_000_000

    /// Parses `text` into its root element. - Throws: a usage error saying what was wrong.
    static func parse(_ text: String) throws -> XMLNode {
        var scanner = Scanner(bytes: Array(text.utf8))
        return try scanner.document()
    }

    private struct Scanner {
        let bytes: [UInt8]
        var position = 0
        var stack: [XMLNode] = []
        var root: XMLNode?
        var elements = 0

        init(bytes: [UInt8]) {
            self.bytes = bytes
            // A UTF-8 byte order mark.
            if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { position = 3 }
        }

        mutating func document() throws -> XMLNode {
            while position < bytes.count {
                if bytes[position] == UInt8(ascii: "<") {
                    try markup()
                } else {
                    try text()
                }
            }
            if let open = stack.last { throw refusal("it ends before <\(open.name)> is closed") }
            guard let root else { throw refusal("it holds no element") }
            return root
        }

        private func refusal(_ reason: String) -> HaulError {
            HaulError.usage("the Metalink is not one Haul reads: \(reason)", hint: "give a Metalink 4 (.meta4) or 3.0 (.metalink) document")
        }

        private func starts(with literal: String) -> Bool {
            bytes[position...].starts(with: literal.utf8)
        }

        /// Moves past the next `terminator`, returning what came before it.
        private mutating func through(_ terminator: String, what: String) throws -> ArraySlice<UInt8> {
            let end = Array(terminator.utf8)
            var index = position
            while index + end.count <= bytes.count {
                if bytes[index] == end[0], bytes[index..<index + end.count].elementsEqual(end) {
                    let found = bytes[position..<index]
                    position = index + end.count
                    return found
                }
                index += 1
            }
            throw refusal("\(what) is not closed")
        }

        private mutating func markup() throws {
            if starts(with: "<?") {
                _ = try through("?>", what: "a processing instruction")
            } else if starts(with: "<!--") {
                position += 4
                _ = try through("-->", what: "a comment")
            } else if starts(with: "<![CDATA[") {
                position += 9
                let content = try through("]]>", what: "a CDATA section")
                try appendText(String(decoding: content, as: UTF8.self))
            } else if starts(with: "<!") {
                throw refusal("it holds a DOCTYPE or declaration, which could expand entities without bound")
            } else if starts(with: "</") {
                position += 2
                let name = try through(">", what: "a closing tag")
                let closing = localName(String(decoding: name, as: UTF8.self).trimmingWhitespace())
                guard let node = stack.popLast(), node.name == closing else { throw refusal("</\(SafeText.cleanLine(closing))> closes no open element") }
                attach(node)
            } else {
                position += 1
                try openTag()
            }
        }

        private mutating func attach(_ node: XMLNode) {
            if stack.isEmpty { root = node } else { stack[stack.count - 1].children.append(node) }
        }

        private mutating func openTag() throws {
            let name = readName()
            guard !name.isEmpty else { throw refusal("a '<' starts no tag") }
            guard root == nil || !stack.isEmpty else { throw refusal("it holds more than one root element") }
            elements += 1
            guard elements <= MetalinkXML.maxElements else { throw refusal("it holds more than \(MetalinkXML.maxElements) elements") }
            guard stack.count < MetalinkXML.maxDepth else { throw refusal("it nests elements deeper than \(MetalinkXML.maxDepth)") }
            var node = XMLNode(name: localName(name))
            while true {
                skipSpace()
                guard position < bytes.count else { throw refusal("<\(SafeText.cleanLine(name))> is not closed") }
                if bytes[position] == UInt8(ascii: ">") {
                    position += 1
                    stack.append(node)
                    return
                }
                if starts(with: "/>") {
                    position += 2
                    attach(node)
                    return
                }
                let attribute = readName()
                skipSpace()
                guard !attribute.isEmpty, position < bytes.count, bytes[position] == UInt8(ascii: "=") else {
                    throw refusal("an attribute of <\(SafeText.cleanLine(name))> has no value")
                }
                position += 1
                skipSpace()
                guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") || bytes[position] == UInt8(ascii: "'") else {
                    throw refusal("an attribute of <\(SafeText.cleanLine(name))> is not quoted")
                }
                let quote = String(UnicodeScalar(bytes[position]))
                position += 1
                let raw = try through(quote, what: "an attribute value")
                node.attributes[localName(attribute)] = try decode(String(decoding: raw, as: UTF8.self))
            }
        }

        private mutating func text() throws {
            let start = position
            while position < bytes.count, bytes[position] != UInt8(ascii: "<") { position += 1 }
            try appendText(try decode(String(decoding: bytes[start..<position], as: UTF8.self)))
        }

        private mutating func appendText(_ text: String) throws {
            if stack.isEmpty {
                guard text.allSatisfy(\.isWhitespace) else { throw refusal("it holds text outside its root element") }
                return
            }
            stack[stack.count - 1].text += text
        }

        private mutating func readName() -> String {
            let start = position
            while position < bytes.count, isNameByte(bytes[position]) { position += 1 }
            return String(decoding: bytes[start..<position], as: UTF8.self)
        }

        private func isNameByte(_ byte: UInt8) -> Bool {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): return true
            case UInt8(ascii: ":"), UInt8(ascii: "_"), UInt8(ascii: "-"), UInt8(ascii: "."): return true
            default: return byte >= 0x80
            }
        }

        private mutating func skipSpace() {
            while position < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[position]) { position += 1 }
        }

        private func localName(_ name: String) -> String {
            name.lastIndex(of: ":").map { String(name[name.index(after: $0)...]) } ?? name
        }

        /// Replaces the predefined entities and character references; refuses any other.
        private func decode(_ text: String) throws -> String {
            guard text.contains("&") else { return text }
            var result = ""
            var rest = Substring(text)
            while let ampersand = rest.firstIndex(of: "&") {
                result += rest[..<ampersand]
                guard let semicolon = rest[ampersand...].firstIndex(of: ";") else { throw refusal("an '&' starts no entity") }
                let entity = rest[rest.index(after: ampersand)..<semicolon]
                switch entity {
                case "lt": result += "<"
                case "gt": result += ">"
                case "amp": result += "&"
                case "quot": result += "\""
                case "apos": result += "'"
                default:
                    guard entity.hasPrefix("#"), let scalar = characterReference(entity.dropFirst()) else {
                        throw refusal("it uses the entity &\(SafeText.cleanLine(String(entity.prefix(40))));, which Haul does not expand")
                    }
                    result.unicodeScalars.append(scalar)
                }
                rest = rest[rest.index(after: semicolon)...]
            }
            return result + rest
        }

        private func characterReference(_ digits: Substring) -> Unicode.Scalar? {
            let value = digits.hasPrefix("x") ? UInt32(digits.dropFirst(), radix: 16) : UInt32(digits, radix: 10)
            return value.flatMap(Unicode.Scalar.init)
        }
    }
}
