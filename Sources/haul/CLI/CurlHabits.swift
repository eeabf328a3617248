import HaulCore

/// What curl and wget users type at `haul get`: the flags that mean the same here work, and
/// those that mean something else are refused with one line naming Haul's way (exit 2).
enum CurlHabits {
    /// Short flags of curl that mean what Haul's long ones do: `-s` quiet, `-H` a header,
    /// `-k` no certificate check, and `-L` and `-f`, which Haul always does (it follows
    /// redirects and fails on an error status).
    static let short: [Character: String] = ["s": "--quiet", "H": "--header", "k": "--insecure", "L": "--location", "f": "--fail"]

    /// curl's and wget's options that `haul get` does not take, each with the line to say instead.
    static let refusals: [String: String] = {
        let remoteName = "haul get names the file from the origin by itself (curl -O, -J); to name it, give -o FILE (wget's -O FILE)"
        let resume = "haul get resumes by itself: run the same command again"
        return [
            "-O": "-O: " + remoteName, "--remote-name": "--remote-name: " + remoteName, "-J": "-J: " + remoteName, "-OJ": "-OJ: " + remoteName,
            "--remote-header-name": "--remote-header-name: " + remoteName,
            "-C": "-C - is curl's resume; " + resume, "--continue-at": "--continue-at is curl's resume; " + resume,
            "-c": "-c is wget's resume; " + resume, "--continue": "--continue is wget's resume; " + resume,
        ]
    }()

    /// The `-o` that `--output-dir DIR` (curl's) makes of `output`: `DIR/` without `-o`, and
    /// `DIR/NAME` for a relative `-o NAME`. An absolute path, `-` or an `s3://` target with it
    /// are refused: the folder could not apply.
    static func output(_ output: String?, directory: String?) throws -> String? {
        guard let directory else { return output }
        guard !directory.isEmpty else { throw HaulError.usage("--output-dir is empty", hint: "give a folder, or leave --output-dir out") }
        guard let output else { return directory.hasSuffix("/") ? directory : directory + "/" }
        guard !output.isEmpty, output != "-", !output.hasPrefix("/"), !output.hasPrefix("s3://") else {
            throw HaulError.usage("--output-dir goes with a relative -o NAME or none", hint: "give -o the whole path instead")
        }
        return (directory.hasSuffix("/") ? directory : directory + "/") + output
    }
}
