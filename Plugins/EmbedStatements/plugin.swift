import Foundation
import PackagePlugin

/// Compiles the SQL statements of a target's `SQL/` folder (`SQL/<Area>/<name>.sql`) into the
/// target as `Statements.<Area>.<name>`, so that each statement is read whole in its own file
/// and the code names it (CONTRIBUTING.md "SQL statements").
@main
struct EmbedStatements: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        // The target's folder by SwiftPM's convention (`directoryURL` needs tools version 6.1).
        let folder = context.package.directoryURL.appending(path: "Sources/\(target.name)/SQL")
        let output = context.pluginWorkDirectoryURL.appending(path: "Statements.swift")
        var folders = [folder]
        var files: [URL] = []
        let enumerator = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: [.isDirectoryKey])
        while let url = enumerator?.nextObject() as? URL {
            if (try url.resourceValues(forKeys: [.isDirectoryKey])).isDirectory == true {
                folders.append(url)
            } else if url.pathExtension == "sql" {
                files.append(url)
            }
        }
        return [
            .buildCommand(
                displayName: "Embedding the SQL statements of \(target.name)",
                executable: try context.tool(named: "embed-statements").url,
                arguments: [output.path(), folder.path()],
                // The folders too: adding a file to one changes it, and the command lists them again.
                inputFiles: folders + files.sorted { $0.path() < $1.path() },
                outputFiles: [output])
        ]
    }
}
