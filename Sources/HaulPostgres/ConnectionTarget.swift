import Foundation

/// Describes where a conninfo string or URL points, for messages, without its password.
public enum ConnectionTarget {
    /// `host:port/dbname` from a `postgresql://` URL, a `key=value` conninfo, or the `PG*` variables.
    public static func describe(_ conninfo: String, environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        var host = environment["PGHOST"] ?? "localhost (Unix socket)"
        var port = environment["PGPORT"] ?? "5432"
        var dbname = environment["PGDATABASE"] ?? ""
        if conninfo.hasPrefix("postgres://") || conninfo.hasPrefix("postgresql://") {
            if let components = URLComponents(string: conninfo) {
                if let value = components.host, !value.isEmpty { host = value }
                if let value = components.port { port = String(value) }
                let path = components.path.trimmingCharacters(in: CharacterSet(charactersIn: "/"))
                if !path.isEmpty { dbname = path }
                for item in components.queryItems ?? [] where item.name == "host" {
                    host = item.value ?? host
                }
            }
        } else {
            for pair in conninfo.split(separator: " ") {
                let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
                guard parts.count == 2 else { continue }
                switch parts[0] {
                case "host", "hostaddr": host = parts[1]
                case "port": port = parts[1]
                case "dbname": dbname = parts[1]
                default: break
                }
            }
        }
        let target = host.startsWithSlash ? "\(host)/.s.PGSQL.\(port)" : "\(host):\(port)"
        return dbname.isEmpty ? target : "\(target)/\(dbname)"
    }
}
