import Foundation
import HaulCore
import HaulDashboard
import HaulMetrics

/// `haul dashboard`: the operator web page and its JSON API, served by this process.
enum DashboardCommand: Command {
    static let name = "dashboard"
    static let summary = "serve the operator dashboard (web page and JSON API) for the whole fleet"
    static let help = """
        usage: haul dashboard [--addr HOST:PORT] [--token-file FILE]

        Serves a live view of the fleet (transfers, batches, workers, hosts) over the
        same database as the other commands, and lets an operator cancel, retry, pause
        and resume transfers or batches and set host limits.

          --addr HOST:PORT   where to listen (default 127.0.0.1:9470)
          --token-file FILE  the operator token, read from FILE (else HAUL_DASHBOARD_TOKEN)

        A token has at least 16 characters; a token file may be written only by its
        owner (this user or root), in a folder others cannot write (or a sticky one).

        With a token, the page asks for it once and keeps a session cookie; scripts
        send 'Authorization: Bearer TOKEN'. Without a token the dashboard is read-only
        and listens only on a loopback address. Stops on SIGINT or SIGTERM.
        """

    static let defaultAddress = "127.0.0.1:9470"

    static func run(_ words: [String]) throws -> Int32 {
        let arguments = try Arguments(words, options: ["--addr", "--token-file"], flags: [])
        _ = try arguments.expect(0, "")
        let address = try MetricsAddress.parse(arguments.value("--addr") ?? defaultAddress, option: "--addr", port: 9470)
        let token = try readToken(file: arguments.value("--token-file"))
        if token == nil && !address.isLoopback {
            throw HaulError.usage(
                "a dashboard without a token serves only loopback, not \(address.text)",
                hint: "set HAUL_DASHBOARD_TOKEN or --token-file, or listen on 127.0.0.1")
        }
        let session = try DatabaseSession()
        defer { session.close() }
        var random = SystemRandomNumberGenerator()
        let key = (0..<32).map { _ in UInt8.random(in: 0...255, using: &random) }
        let dashboard = Dashboard(auth: DashboardAuth(token: token, key: key), pool: ConnectionPool(conninfo: session.conninfo, keep: Int(threads)))
        let server = try HTTPServer(address: address, limits: .init(threads: threads), option: "--addr", purpose: "the dashboard") {
            dashboard.handle($0)
        }
        Output.error("haul: dashboard on http://\(address.text)/ " + (token == nil ? "(read-only: no token)" : "(token required)"))
        Signals.install()
        while !Signals.stopRequested { usleep(100_000) }
        server.stop()
        return ExitCode.success
    }

    /// Threads answering requests (each with its own database connection while it answers).
    private static let threads: UInt32 = 4

    /// The token from `--token-file` or `HAUL_DASHBOARD_TOKEN`, without surrounding whitespace; nil when neither is set.
    /// Throws a usage error for a short token or a file that others could rewrite (`TokenRules`).
    static func readToken(file: String?) throws -> String? {
        if let file {
            if let problem = TokenRules.checkFile(file) { throw HaulError.usage(problem) }
            guard let data = FileManager.default.contents(atPath: file) else {
                throw HaulError.usage("cannot read --token-file '\(file)'", hint: "give a readable file holding the token")
            }
            let token = String(decoding: data, as: UTF8.self).trimmingWhitespace()
            guard !token.isEmpty else { throw HaulError.usage("--token-file '\(file)' is empty", hint: "write the token into it") }
            if let problem = TokenRules.tokenProblem(token, source: "--token-file '\(file)'") { throw HaulError.usage(problem) }
            return token
        }
        let token = ProcessInfo.processInfo.environment["HAUL_DASHBOARD_TOKEN"]?.trimmingWhitespace() ?? ""
        if token.isEmpty { return nil }
        if let problem = TokenRules.tokenProblem(token, source: "HAUL_DASHBOARD_TOKEN") { throw HaulError.usage(problem) }
        return token
    }
}
