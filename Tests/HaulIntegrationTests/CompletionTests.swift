import Foundation
import HaulTestSupport
import Testing

/// Shell completion and the man page, generated from the same help texts as `--help`.
@Suite("completion and man page")
struct CompletionTests {
    static let commands = [
        "get", "enqueue", "worker", "status", "list", "cancel", "retry", "pause", "resume", "wait", "batches", "workers", "host-limit", "prune", "upload",
        "zip",
        "extract", "migrate", "completion", "man",
    ]

    /// What bash completes for the words typed so far (the last one being completed).
    static func bashCompletes(_ words: [String], script: String) throws -> [String] {
        let program = """
            source "$1"
            shift
            COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 ))
            _haul
            printf '%s\\n' "${COMPREPLY[@]}"
            """
        let result = try Run.program("/bin/bash", ["-c", program, "bash", script] + words, environment: [:])
        return result.stdout.split(separator: "\n").map(String.init)
    }

    @Test("bash completion completes commands and each command's options, all of which its --help documents")
    func bash() throws {
        let generated = try Run.haul(["completion", "bash"], database: nil)
        #expect(generated.status == 0)
        let script = Harness.temporaryDirectory("completion") + "/haul.bash"
        try generated.stdout.write(toFile: script, atomically: true, encoding: .utf8)
        #expect(try Self.bashCompletes(["haul", "ge"], script: script) == ["get"])
        #expect(try Self.bashCompletes(["haul", "get", "--conn"], script: script) == ["--connections"])
        #expect(try Set(Self.bashCompletes(["haul", "list", "--"], script: script)).isSuperset(of: ["--state", "--batch", "--host", "--json"]))
        #expect(try Self.bashCompletes(["haul", "cancel", "--y"], script: script) == ["--yes"])
        for command in Self.commands {
            let help = try Run.haul([command, "--help"], database: nil).stdout
            let offered = try Self.bashCompletes(["haul", command, "-"], script: script)
            #expect(!offered.isEmpty, "\(command) has options to complete")
            for option in offered where option != "--help" {
                #expect(help.contains(option), "haul \(command): completion offers \(option), which --help does not document")
            }
        }
    }

    @Test("zsh and fish scripts name every command; an unknown shell is refused")
    func otherShells() throws {
        let zsh = try Run.haul(["completion", "zsh"], database: nil).stdout
        let fish = try Run.haul(["completion", "fish"], database: nil).stdout
        #expect(zsh.hasPrefix("#compdef haul"))
        for command in Self.commands {
            #expect(zsh.contains("'\(command):") && fish.contains("-a \(command) "), "\(command)")
        }
        #expect(fish.contains("'__fish_seen_subcommand_from get' -s x") && fish.contains("-l connections"))
        let bad = try Run.haul(["completion", "bsah"], database: nil)
        #expect(bad.status == 2 && bad.stderr.contains("did you mean 'bash'?"), "\(bad.stderr)")
    }

    @Test("the man page holds every command's help, renders with man(1), and the install script puts everything in place")
    func manPage() throws {
        let page = try Run.haul(["man"], database: nil)
        #expect(page.status == 0 && page.stdout.hasPrefix(".TH HAUL 1"))
        for command in Self.commands {
            #expect(page.stdout.contains(".SS \(command)\n.nf\nusage: haul \(command)"), "\(command)")
        }
        let prefix = Harness.temporaryDirectory("manprefix")
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("deploy/install-shell-support.sh").path
        let installed = try Run.program("/bin/bash", [script, Harness.haulBinary, prefix], environment: [:])
        #expect(installed.status == 0, "\(installed.stderr)")
        for file in ["bash-completion/completions/haul", "zsh/vendor-completions/_haul", "fish/vendor_completions.d/haul.fish", "man/man1/haul.1"] {
            #expect(((try? FileManager.default.attributesOfItem(atPath: prefix + "/share/" + file))?[.size] as? Int ?? 0) > 100, "\(file)")
        }
        if FileManager.default.isExecutableFile(atPath: "/usr/bin/man") {
            let rendered = try Run.program("/usr/bin/man", ["-l", prefix + "/share/man/man1/haul.1"], environment: ["MANPAGER": "cat", "MANWIDTH": "100"])
            #expect(
                rendered.status == 0 && rendered.stdout.contains("haul - copy large files") && rendered.stdout.contains("usage: haul get"), "\(rendered.stderr)"
            )
        }
    }
}
