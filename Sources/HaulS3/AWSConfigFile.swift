/// One AWS shared file, `~/.aws/config` or `~/.aws/credentials`, read the way the AWS CLI reads
/// it: `[section]` headers, `key = value` lines, `#` and `;` comment lines, and indented lines
/// under a key without a value as its nested settings (`s3 =` then `  endpoint_url = …`,
/// stored as `s3.endpoint_url`). Pure, so the rules are tested without files.
public struct AWSConfigFile: Sendable, Equatable {
    /// Settings by section name as written between the brackets (`profile dev`, `default`,
    /// `services local`), keys lower-cased.
    public var sections: [String: [String: String]]

    /// No sections.
    public init() { sections = [:] }

    /// The sections of `text`; lines outside any section are ignored.
    public init(parsing text: String) {
        sections = [:]
        var section: String?
        var parent: String?
        for raw in text.split(whereSeparator: \.isNewline) {
            let indented = raw.first == " " || raw.first == "\t"
            let line = raw.trimmingWhitespace()
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            if line.hasPrefix("[") && line.hasSuffix("]") {
                let name = String(line.dropFirst().dropLast()).trimmingWhitespace()
                section = name
                parent = nil
                if sections[name] == nil { sections[name] = [:] }
                continue
            }
            guard let current = section, let equals = line.firstIndex(of: "=") else { continue }
            let key = line[..<equals].trimmingWhitespace().lowercased()
            let value = line[line.index(after: equals)...].trimmingWhitespace()
            if indented, let parent {
                sections[current]?[parent + "." + key] = value
            } else {
                sections[current]?[key] = value
                parent = value.isEmpty ? key : nil
            }
        }
    }

    /// The settings of profile `name`: `[profile name]` of the config file (`[default]` or
    /// `[profile default]` for `default`) with `[name]` of the credentials file over them, as
    /// the CLI merges them; `nil` when neither file has the profile.
    public static func profile(_ name: String, config: AWSConfigFile, credentials: AWSConfigFile) -> [String: String]? {
        var merged: [String: String]?
        let configNames = name == "default" ? ["default", "profile default"] : ["profile " + name]
        for section in configNames {
            if let values = config.sections[section] { merged = (merged ?? [:]).merging(values) { _, new in new } }
        }
        if let values = credentials.sections[name] { merged = (merged ?? [:]).merging(values) { _, new in new } }
        return merged
    }

    /// The settings of `[services name]` for `service` (e.g. `s3`, `sts`): its nested lines.
    public func service(_ service: String, in name: String) -> [String: String] {
        let prefix = service.lowercased() + "."
        var found: [String: String] = [:]
        for (key, value) in sections["services " + name] ?? [:] where key.hasPrefix(prefix) {
            found[String(key.dropFirst(prefix.count))] = value
        }
        return found
    }
}
