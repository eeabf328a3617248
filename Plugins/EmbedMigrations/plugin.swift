import PackagePlugin

/// Compiles the SQL files of the top-level `migrations/` folder into the target, so the
/// `haul` binary carries its schema wherever it is copied.
@main
struct EmbedMigrations: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let folder = context.package.directoryURL.appending(path: "migrations")
        let output = context.pluginWorkDirectoryURL.appending(path: "EmbeddedMigrations.swift")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path())
            .filter { $0.hasSuffix(".sql") }
            .sorted()
            .map { folder.appending(path: $0) }
        return [
            .buildCommand(
                displayName: "Embedding the migrations",
                executable: try context.tool(named: "embed-migrations").url,
                arguments: [output.path(), folder.path()],
                // The folder too: adding a file to it changes it, and the command lists it again.
                inputFiles: [folder] + files,
                outputFiles: [output])
        ]
    }
}

import Foundation
