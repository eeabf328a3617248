/// The exit statuses of `haul`, one table for every command: a script tells what went wrong
/// from the number alone, as with wget (4 network, 5 TLS, 6 authentication, 7 protocol,
/// 8 server error) and aria2c (9 disk space). docs/reference-exit-codes.md lists them; each
/// error code names its own (`HaulError.Code.exitStatus`).
public enum ExitStatus {
    /// The work was done.
    public static let success: Int32 = 0
    /// A failure with no more telling status.
    public static let failure: Int32 = 1
    /// Bad arguments, or a refusal that is the user's to resolve: nothing was done.
    public static let usage: Int32 = 2
    /// `haul wait`: the database stayed unreachable.
    public static let databaseUnreachable: Int32 = 3
    /// The network failed: DNS, connect, reset, stall, a body cut short.
    public static let network: Int32 = 4
    /// TLS failed: a handshake, or a certificate that could not be verified.
    public static let tls: Int32 = 5
    /// The origin refused the credentials (401, 403).
    public static let authentication: Int32 = 6
    /// The origin broke HTTP: a malformed exchange, a wrong `Content-Range`, a body too long.
    public static let malformedResponse: Int32 = 7
    /// The origin answered an error status (4xx other than 401/403, 5xx) or kept redirecting.
    public static let originError: Int32 = 8
    /// The storage refused: full, permission, a write, sync or rename.
    public static let storage: Int32 = 9
    /// The finished file's digest differs from `--checksum`.
    public static let checksumMismatch: Int32 = 10
    /// `haul wait --timeout` ran out.
    public static let timeout: Int32 = 124
    /// Interrupted by a signal before the work finished; what was done is kept.
    public static let interrupted: Int32 = 130

    /// The status of a command that failed with errors of these codes, in the order they
    /// happened: a refusal (status 2) wins, else the first failure's status.
    public static func of(_ codes: [HaulError.Code]) -> Int32 {
        let statuses = codes.map(\.exitStatus)
        if statuses.contains(usage) { return usage }
        return statuses.first ?? failure
    }
}
