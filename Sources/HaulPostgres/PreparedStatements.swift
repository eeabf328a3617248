import Foundation
import HaulCore

/// When a connection runs `prepared` statements as named prepared statements
/// (`HAUL_PREPARED_STATEMENTS`).
///
/// A pooler in transaction mode (PgBouncer before 1.21, or without `max_prepared_statements`)
/// hands each transaction whatever server session is free: a statement one client prepared on a
/// session is missing from the next, and another client's first `Parse` of the same name on
/// that session fails with "prepared statement already exists", an error PostgreSQL logs.
/// So behind a pooler Haul prepares nothing unless told the pooler keeps prepared statements.
public enum PreparedStatements: String, Sendable, CaseIterable {
    /// Prepared on a direct connection, unprepared behind a pooler (the default).
    case auto
    /// Prepared behind a pooler too: PgBouncer 1.21 or later with `max_prepared_statements`
    /// set, or a pooler in session mode. A connection whose sessions turn out to change under
    /// it still falls back to unprepared statements at the first mismatch.
    case always
    /// Never prepared.
    case never

    /// The environment variable that sets the policy.
    public static let variable = "HAUL_PREPARED_STATEMENTS"

    /// The policy `environment` sets. - Throws: a usage error for a value other than the three.
    public static func from(_ environment: [String: String]) throws -> PreparedStatements {
        guard let text = environment[variable], !text.isEmpty else { return .auto }
        guard let policy = PreparedStatements(rawValue: text.lowercased()) else {
            throw HaulError.usage(
                "\(variable) '\(SafeText.cleanLine(text))' is not one of \(allCases.map(\.rawValue).joined(separator: ", "))",
                hint: "unset it, or 'always' for a pooler that keeps prepared statements")
        }
        return policy
    }

    /// This process's policy (`auto` when the variable is unset or wrong; commands refuse a
    /// wrong value before they connect).
    public static let current = (try? from(ProcessInfo.processInfo.environment)) ?? .auto

    /// Whether a connection prepares its statements, `throughPooler` or not.
    func prepares(throughPooler: Bool) -> Bool {
        switch self {
        case .auto: !throughPooler
        case .always: true
        case .never: false
        }
    }
}
