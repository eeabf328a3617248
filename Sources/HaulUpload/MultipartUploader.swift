import CCurl
import HaulCore
import HaulHTTP

/// Sends a ``MultipartRequest`` as one streamed `multipart/form-data` POST.
public enum MultipartUploader {
    /// Uploads the request's files and fields, retrying 5xx answers and network errors.
    ///
    /// Blocks the calling thread (never call it on the Swift concurrency pool); the process must
    /// have called `curl_global_init` once before. File bytes are streamed from disk, so memory
    /// stays bounded whatever the size. A retry restarts the POST from the beginning.
    /// - Parameters:
    ///   - retry: how many attempts and how long to wait between them.
    ///   - mimeTypes: the extension table for file parts without ``MultipartRequest/contentType``.
    ///   - progress: called often with (body bytes sent, body size) of the current attempt.
    ///   - shouldCancel: polled during the upload and the waits; true stops with error `canceled`.
    ///   Both closures run on the calling thread, inside libcurl callbacks: keep them short.
    /// - Returns: the server's 2xx answer.
    /// - Throws: ``HaulCore/HaulError`` — `upload-rejected` (3xx, 4xx but 408/429: at once),
    ///   `server-error` or `network` (after the last attempt; `retryAfter` set when the server
    ///   sent one), `tls`, `bad-url`, `file-changed`, `file-unreadable`, `canceled`, `usage`.
    public static func send(
        _ request: MultipartRequest, retry: RetryPolicy = RetryPolicy(), mimeTypes: MimeTypes = MimeTypes(),
        progress: ((_ sent: Int64, _ total: Int64) -> Void)? = nil, shouldCancel: (() -> Bool)? = nil
    ) throws -> UploadResponse {
        try request.validate()
        let files = try request.files.map(UploadFile.init(path:))
        let redactor = Redactor(url: request.url, headers: request.headers)
        var loop = RetryLoop(policy: retry, shouldCancel: shouldCancel ?? { false })
        while true {
            for file in files { try file.checkUnchanged() }
            let transfer = try CurlTransfer(
                url: request.url, headers: request.headers, caBundle: request.caBundle, insecure: request.insecure, redactor: redactor)
            transfer.progress = progress
            transfer.shouldCancel = shouldCancel
            addParts(of: request, files: files, mimeTypes: mimeTypes, to: transfer)
            do throws(HaulError) {
                return try transfer.performExpectingSuccess()
            } catch {
                try loop.failed(error)
            }
        }
    }

    /// Text fields first, in order, then one part per file; every part carries its own
    /// `Content-Disposition` (see ``FormDisposition``).
    private static func addParts(of request: MultipartRequest, files: [UploadFile], mimeTypes: MimeTypes, to transfer: CurlTransfer) {
        let form = transfer.makeForm()
        for (name, value) in request.fields {
            let part = curl_mime_addpart(form)
            let bytes = Array(value.utf8)
            bytes.withUnsafeBufferPointer { buffer in
                buffer.withMemoryRebound(to: CChar.self) { _ = curl_mime_data(part, $0.baseAddress, $0.count) }
            }
            setDisposition(of: part, FormDisposition.header(name: name))
        }
        for file in files {
            let source = FileSource(file)
            transfer.sources.append(source)
            let filename = request.filename ?? String(file.path.lastSlashComponent ?? "file")
            let part = curl_mime_addpart(form)
            curl_mime_data_cb(
                part, curl_off_t(source.length), FileSource.readCallback, FileSource.seekCallback, nil,
                Unmanaged.passUnretained(source).toOpaque())
            curl_mime_type(part, request.contentType ?? mimeTypes.type(forFilename: filename))
            setDisposition(of: part, FormDisposition.header(name: request.fileField, filename: filename))
        }
    }

    private static func setDisposition(of part: OpaquePointer?, _ header: String) {
        curl_mime_headers(part, curl_slist_append(nil, header), 1)
    }
}
