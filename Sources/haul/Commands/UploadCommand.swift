import Foundation
import HaulCore
import HaulHTTP
import HaulQueue
import HaulUpload

enum UploadCommand: Command {
    static let name = "upload"
    static let summary = "send files as a streaming multipart/form-data POST or a resumable tus upload"
    static let help = """
        usage: haul upload FILE... URL [options]

        Sends the files to URL as one multipart/form-data POST (default; the way a browser
        form does), streamed from disk, or as a resumable tus 1.0.0 upload. Prints the
        status line and the body (on a terminal: JSON pretty-printed, control and escape
        characters shown as �). Any 2xx succeeds; 4xx fails at once with the server's
        message; 5xx and network errors are retried with backoff, honouring Retry-After
        (a multipart POST restarts from the start, a tus upload continues from the
        server's offset).

          --field NAME=VALUE   add a text field (repeatable; UTF-8 kept; tus: Upload-Metadata)
          --file-field NAME    form field name of the file parts (default: file)
          --filename NAME      file name to announce instead of the file's own (one file only)
          --type MIME          Content-Type of the file parts (default: looked up by extension
                               in /etc/mime.types, else application/octet-stream)
          --header 'Name: v'   extra request header (repeatable; credentials never printed)
          --header @FILE       the headers in FILE, one 'Name: value' a line ('#' comments):
                               a secret there is not in the command line, which ps shows
          --netrc              log in with the entry for the URL's host in $NETRC or ~/.netrc
                               (machine HOST login USER password PASS, or default)
          --netrc-file FILE    the same from FILE
          --protocol P         multipart (default) or tus
          --chunk-size SIZE    tus PATCH size (default 8MiB)
          --resume URL         tus: continue this recorded upload URL
          --retries N          attempts in total for 5xx/network errors (default 5)
          --ca-cert FILE       trust this CA bundle (or HAUL_CA_BUNDLE)
          --insecure           do not verify the server's TLS certificate
        """

    static func run(_ words: [String]) throws -> Int32 {
        let arguments = try Arguments(
            words,
            options: [
                "--field", "--file-field", "--filename", "--type", "--header", "--protocol", "--chunk-size", "--resume", "--retries", "--ca-cert",
                "--netrc-file",
            ],
            flags: ["--insecure", "--netrc"])
        guard arguments.positionals.count >= 2, let url = arguments.positionals.last else {
            throw HaulError.usage("haul upload needs at least one file and a URL", hint: "haul upload FILE... URL")
        }
        _ = try OriginURL.validate(url, uploading: true)
        let files = Array(arguments.positionals.dropLast())
        for file in files { try PathArguments.readableFile(file, role: "FILE", hint: "upload regular files you can read") }
        var given = try HeaderFile.expand(arguments.all("--header"), read: HeaderFile.read)
        if let login = TransferFlags.netrcLogin(for: url, headers: given, from: try TransferFlags.netrc(arguments)) { given.append(login) }
        let headers = given.map { "\($0.name): \($0.value)" }
        var retry = RetryPolicy()
        retry.attempts = try arguments.positiveInt("--retries") ?? retry.attempts
        let caBundle = arguments.value("--ca-cert") ?? ProcessInfo.processInfo.environment["HAUL_CA_BUNDLE"]
        let tty = Output.stderrIsTerminal
        var bar = ProgressBar(terminal: tty)
        let progress: (Int64, Int64) -> Void = { sent, total in bar.update(bytes: sent, size: total, segments: "", state: "uploading") }
        let response: UploadResponse
        switch arguments.value("--protocol") ?? "multipart" {
        case "multipart":
            var request = MultipartRequest(
                url: url, files: files, fileField: arguments.value("--file-field") ?? "file", headers: headers,
                caBundle: caBundle, insecure: arguments.has("--insecure"))
            request.fields = try arguments.all("--field").map(MultipartRequest.parseField)
            request.filename = arguments.value("--filename")
            request.contentType = arguments.value("--type")
            response = try MultipartUploader.send(request, retry: retry, progress: progress)
        case "tus":
            guard files.count == 1 else { throw HaulError.usage("tus uploads one file at a time", hint: "run haul upload once per file") }
            var request = TusRequest(
                url: url, file: files[0], filename: arguments.value("--filename"), contentType: arguments.value("--type"),
                fields: try arguments.all("--field").map(MultipartRequest.parseField), headers: headers, caBundle: caBundle,
                insecure: arguments.has("--insecure"))
            request.chunkSize = try arguments.size("--chunk-size") ?? request.chunkSize
            response = try TusUploader.upload(
                request, resumeURL: arguments.value("--resume"), retry: retry,
                onUploadURL: { Output.error("upload URL: \(Redaction.url($0)) (resume with --resume)") }, progress: progress)
        case let other:
            throw HaulError.usage("--protocol '\(other)' is not multipart or tus")
        }
        bar.finish()
        Output.line(response.statusLine)
        // A terminal gets the server's body with its escapes made visible; a pipe or file gets its bytes.
        let body = isatty(1) == 1 ? SafeText.cleanText(response.prettyBody) : String(decoding: response.body, as: UTF8.self)
        if !body.isEmpty { Output.line(body) }
        return ExitCode.success
    }
}
