import Foundation
import HaulCore
import HaulHTTP
import HaulPostgres
import HaulWorker

/// Every subcommand, in the order `haul --help` lists them.
let commands: [(name: String, summary: String, help: String, run: ([String]) throws -> Int32)] = {
    var list: [(String, String, String, ([String]) throws -> Int32)] = [
        (GetCommand.name, GetCommand.summary, GetCommand.help, GetCommand.run),
        (EnqueueCommand.name, EnqueueCommand.summary, EnqueueCommand.help, EnqueueCommand.run),
        (WorkerCommand.name, WorkerCommand.summary, WorkerCommand.help, WorkerCommand.run),
        (StatusCommand.name, StatusCommand.summary, StatusCommand.help, StatusCommand.run),
        (ListCommand.name, ListCommand.summary, ListCommand.help, ListCommand.run),
    ]
    for control in ControlCommand.all {
        list.append((control.action.rawValue, control.summary, control.help, control.run))
    }
    list.append((WaitCommand.name, WaitCommand.summary, WaitCommand.help, WaitCommand.run))
    list.append((BatchesCommand.name, BatchesCommand.summary, BatchesCommand.help, BatchesCommand.run))
    list.append((WorkersCommand.name, WorkersCommand.summary, WorkersCommand.help, WorkersCommand.run))
    list.append((DashboardCommand.name, DashboardCommand.summary, DashboardCommand.help, DashboardCommand.run))
    list.append((HostLimitCommand.name, HostLimitCommand.summary, HostLimitCommand.help, HostLimitCommand.run))
    list.append((PruneCommand.name, PruneCommand.summary, PruneCommand.help, PruneCommand.run))
    list.append((UploadCommand.name, UploadCommand.summary, UploadCommand.help, UploadCommand.run))
    list.append((ZipCommand.name, ZipCommand.summary, ZipCommand.help, ZipCommand.run))
    list.append((ExtractCommand.name, ExtractCommand.summary, ExtractCommand.help, ExtractCommand.run))
    list.append((MigrateCommand.name, MigrateCommand.summary, MigrateCommand.help, MigrateCommand.run))
    list.append((CompletionCommand.name, CompletionCommand.summary, CompletionCommand.help, CompletionCommand.run))
    list.append((ManCommand.name, ManCommand.summary, ManCommand.help, ManCommand.run))
    return list
}()

let overview = """
    haul \(HaulVersion.current) — copy large files from HTTP(S) origins into shared storage with a
    fleet of workers coordinated through PostgreSQL.

    usage: haul COMMAND [ARGS]   ·   haul COMMAND --help for its options

    commands:
    \(commands.map { "  " + $0.name.padding(toLength: 12, withPad: " ", startingAt: 0) + $0.summary }.joined(separator: "\n"))

    environment:
      DATABASE_URL   postgresql:// URL or libpq conninfo (PG* variables are honoured too);
                     unset: an embedded PostgreSQL under HAUL_HOME (~/.local/share/haul)
      HAUL_STORAGE   storage root for 'haul worker' (or --storage)
      HAUL_CA_BUNDLE CA bundle trusted for HTTPS origins
      HAUL_RETENTION how long workers keep finished transfers before pruning them (default 7d, 'off')
      HAUL_DASHBOARD_TOKEN  the operator token of 'haul dashboard' (unset: read-only, loopback only)
      HAUL_EMBEDDED_LINGER  how long the embedded PostgreSQL stays up after the last command (default 30s, 0)

    haul --version (or -V, or 'haul version') prints the version.
    exit status: 0 success, 1 failure, 2 bad arguments, 130 interrupted; 4-10 say what failed
    (network, TLS, authentication, response, origin, storage, checksum: haul get --help)
    """

/// Words that print the version, like git's and curl's.
let versionWords: Set<String> = ["--version", "-V", "version"]

@MainActor
func main(_ arguments: [String]) -> Int32 {
    guard let name = arguments.first, name != "--help", name != "-h", name != "help" || arguments.count > 1 else {
        Output.line(overview)
        return ExitCode.success
    }
    if versionWords.contains(name) {
        Output.line("haul \(HaulVersion.current)")
        return ExitCode.success
    }
    let commandName = name == "help" ? arguments[1] : name
    guard let command = commands.first(where: { $0.name == commandName }) else {
        let known = commands.map(\.name) + ["help", "version"]
        if commandName.hasPrefix("-") {
            let hint = Suggestion.hint(for: commandName, among: ["--help", "--version"])
            Output.error("haul: unknown option '\(commandName)'; \(hint.isEmpty ? "" : hint + " ")run 'haul --help' for usage")
        } else {
            let hint = Suggestion.hint(for: commandName, among: known)
            Output.error("haul: unknown command '\(commandName)'; \(hint.isEmpty ? "" : hint + " ")run 'haul --help' for the list")
        }
        return ExitCode.usage
    }
    let rest = Array(arguments.dropFirst())
    if name == "help" || rest.contains("--help") || rest.contains("-h") {
        Output.line(command.help)
        return ExitCode.success
    }
    do {
        return try command.run(rest)
    } catch let error as HaulError {
        // Peer text is cleaned where it enters; this is the last guard before the terminal.
        Output.error("haul: \(SafeText.cleanLine(error.description))")
        // The code says which status (`ExitStatus`): refusals that are the user's to resolve
        // give 2 like bad arguments, a network, TLS, origin or storage failure its own.
        return error.code.exitStatus
    } catch let error as PostgresError {
        Output.error("haul: database error: \(error.description)")
        return ExitCode.failure
    } catch {
        Output.error("haul: \(HaulError.describing(error))")
        return ExitCode.failure
    }
}

StandardStream.ignoreBrokenPipes()
Curl.initialize()
exit(main(Array(CommandLine.arguments.dropFirst())))
