import CCurl
import Foundation
import HaulCore

/// The three tus requests (create, `HEAD`, `PATCH`) for one file, each one attempt.
///
/// Not `Sendable`: lives on the uploading thread for one ``TusUploader/upload`` call.
final class TusSession {
    private let request: TusRequest
    private let file: UploadFile
    private let redactor: Redactor
    private let metadata: String
    private let progress: ((Int64, Int64) -> Void)?
    private let shouldCancel: (() -> Bool)?

    init(_ request: TusRequest, mimeTypes: MimeTypes, progress: ((Int64, Int64) -> Void)?, shouldCancel: (() -> Bool)?) throws(HaulError) {
        self.request = request
        file = try UploadFile(path: request.file)
        redactor = Redactor(url: request.url, headers: request.headers)
        let name = request.filename ?? String(request.file.lastSlashComponent ?? "file")
        let defaults = [("filename", name), ("filetype", request.contentType ?? mimeTypes.type(forFilename: name))]
        let given = Set(request.fields.map(\.name))
        metadata = Self.metadata(defaults.filter { !given.contains($0.0) } + request.fields.map { ($0.name, $0.value) })
        self.progress = progress
        self.shouldCancel = shouldCancel
    }

    /// The file's size when the upload started.
    var size: Int64 { file.size }

    /// `Upload-Metadata`: `key base64(value)` pairs joined by commas.
    static func metadata(_ pairs: [(String, String)]) -> String {
        pairs.map { "\($0.0) \(Data($0.1.utf8).base64EncodedString())" }.joined(separator: ",")
    }

    /// Throws `file-changed` unless the file is as it was when the upload started.
    func checkFileUnchanged() throws(HaulError) {
        try file.checkUnchanged()
    }

    /// POSTs the creation request.
    /// - Returns: the absolute upload URL (`Location`, resolved against the endpoint and refused
    ///   with `bad-server` unless on the endpoint's origin: ``TusLocation``) and the answer.
    func create() throws(HaulError) -> (String, UploadResponse) {
        // `Content-Type:` with no value stops libcurl announcing a form for the empty body.
        let transfer = try makeTransfer(request.url, ["Upload-Length: \(size)", "Upload-Metadata: \(metadata)", "Content-Type:"])
        haul_easy_setopt_long(transfer.easy, CURLOPT_POST, 1)
        haul_easy_setopt_off(transfer.easy, CURLOPT_POSTFIELDSIZE_LARGE, 0)
        haul_easy_setopt_string(transfer.easy, CURLOPT_COPYPOSTFIELDS, "")
        let answer = try transfer.performExpectingSuccess()
        guard let location = answer.header("Location") else {
            throw badServer("answered the creation request with \(answer.statusLine) but no Location")
        }
        return (try TusLocation.resolve(location, endpoint: request.url), answer)
    }

    /// HEADs the upload for its `Upload-Offset`.
    /// - Returns: `nil` when the server no longer has the upload (404, 410).
    func offset(of url: String) throws(HaulError) -> (Int64, UploadResponse)? {
        let transfer = try makeTransfer(url, [])
        haul_easy_setopt_long(transfer.easy, CURLOPT_NOBODY, 1)
        let answer = try transfer.perform()
        if answer.status == 404 || answer.status == 410 { return nil }
        guard answer.isSuccess else { throw transfer.failure(answer) }
        if let length = answer.header("Upload-Length").flatMap({ Int64($0) }), length != size {
            throw mismatch("upload \(Redaction.url(url)) is for \(length) bytes but '\(request.file)' has \(size)")
        }
        guard let offset = answer.header("Upload-Offset").flatMap({ Int64($0) }), (0...size).contains(offset) else {
            throw badServer("gave no valid Upload-Offset for \(Redaction.url(url))")
        }
        return (offset, answer)
    }

    /// PATCHes one chunk starting at `offset`, streamed from the file. 409 (the server is at
    /// another offset) and 423 (the upload is locked by a request still in flight) are transient:
    /// the retry asks for the offset again.
    /// - Returns: the server's new `Upload-Offset` (beyond `offset`) and the answer.
    func patch(_ url: String, from offset: Int64) throws(HaulError) -> (Int64, UploadResponse) {
        let transfer = try makeTransfer(url, ["Upload-Offset: \(offset)", "Content-Type: application/offset+octet-stream"])
        haul_easy_setopt_string(transfer.easy, CURLOPT_CUSTOMREQUEST, "PATCH")
        transfer.setBody(FileSource(file, start: offset, length: min(request.chunkSize, size - offset)))
        transfer.progress = progress.map { report in { sent, _ in report(offset + sent, self.size) } }
        let answer = try transfer.perform()
        if answer.status == 409 || answer.status == 423 {
            throw HaulError(.serverError, "the tus server answered \(answer.statusLine) to a chunk at offset \(offset)", transient: true)
        }
        guard answer.isSuccess else { throw transfer.failure(answer) }
        guard let next = answer.header("Upload-Offset").flatMap({ Int64($0) }), next > offset, next <= size else {
            throw HaulError(.serverError, "the tus server did not move past offset \(offset) of \(Redaction.url(url))", transient: true)
        }
        return (next, answer)
    }

    /// A non-transient `upload-mismatch` error: the recorded upload cannot take this file.
    func mismatch(_ message: String) -> HaulError {
        HaulError(.uploadMismatch, message, hint: "start a new upload instead of resuming this one")
    }

    private func badServer(_ message: String) -> HaulError {
        HaulError(.badServer, "the tus server at \(Redaction.url(request.url)) \(message)")
    }

    private func makeTransfer(_ url: String, _ headers: [String]) throws(HaulError) -> CurlTransfer {
        let transfer = try CurlTransfer(
            url: url, headers: request.headers + ["Tus-Resumable: \(TusUploader.version)"] + headers,
            caBundle: request.caBundle, insecure: request.insecure, redactor: redactor)
        transfer.shouldCancel = shouldCancel
        return transfer
    }
}
