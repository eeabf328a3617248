import CCurl
import Foundation
import HaulCore
import HaulHTTP

/// One request on a pooled libcurl easy handle (`CurlHandles`, so that the requests of an
/// upload reuse one connection), and the response its callbacks collect.
///
/// Not `Sendable`: the handle, its callbacks and ``perform()`` all run on the caller's thread.
/// `curl_global_init` must have been called by the process before.
final class CurlTransfer {
    private let handle: UnsafeMutableRawPointer
    private var headerList: UnsafeMutablePointer<curl_slist>?
    private let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE))
    private let action: String
    private let url: String
    /// Body bytes sent so far, for the failure's wording.
    private var sent: Int64 = 0
    private let redactor: Redactor
    private var collected = UploadResponse(status: 0)
    private var cancelled = false
    private var form: OpaquePointer?
    /// Sources whose failure (a changed file) explains an aborted transfer.
    var sources: [FileSource] = []
    /// Called with (bytes sent, bytes to send) of this request's body; total is 0 while unknown.
    var progress: ((Int64, Int64) -> Void)?
    /// Polled during the transfer; returning true aborts it with a `canceled` error.
    var shouldCancel: (() -> Bool)?

    /// A request to `url` with the caller's `headers` (`Name: value` lines) plus `Expect:` (no
    /// 100-continue wait); errors name it `upload to <url>`, the URL redacted.
    init(url: String, headers: [String], caBundle: String?, insecure: Bool, redactor: Redactor) throws(HaulError) {
        let handle = try CurlHandles.shared.take()
        self.handle = handle
        self.redactor = redactor
        self.url = url
        action = "upload to \(Redaction.url(url))"
        errorBuffer.initialize(to: 0)
        for line in headers + ["Expect:"] { headerList = curl_slist_append(headerList, line) }
        // Uploads never follow redirects (a 3xx fails with its Location shown), and no URL may
        // make libcurl speak anything but HTTP: not file:, gopher:, smtp: or the rest.
        CurlSetup.common(handle, url: url, tls: TLSOptions(caBundle: caBundle, insecure: insecure), stallSeconds: 120, errorBuffer: errorBuffer)
        haul_easy_setopt_slist(handle, CURLOPT_HTTPHEADER, headerList)
        installCallbacks()
    }

    deinit {
        CurlHandles.shared.give(handle)
        curl_mime_free(form)
        curl_slist_free_all(headerList)
        errorBuffer.deallocate()
    }

    /// The raw handle, for the request-specific options (method, body) callers set.
    var easy: UnsafeMutableRawPointer { handle }

    /// Sends the request body, if any, from `source` (an upload of exactly its length).
    func setBody(_ source: FileSource) {
        sources.append(source)
        haul_easy_setopt_long(handle, CURLOPT_UPLOAD, 1)
        haul_easy_setopt_off(handle, CURLOPT_INFILESIZE_LARGE, curl_off_t(source.length))
        haul_easy_setopt_pointer(handle, CURLOPT_READDATA, Unmanaged.passUnretained(source).toOpaque())
        haul_easy_setopt_pointer(handle, CURLOPT_SEEKDATA, Unmanaged.passUnretained(source).toOpaque())
        haul_easy_setopt_read_function(handle, FileSource.readCallback)
        haul_easy_setopt_seek_function(handle, FileSource.seekCallback)
    }

    /// Creates the `multipart/form-data` body this request POSTs; freed with the handle.
    func makeForm() -> OpaquePointer {
        if let form { return form }
        let created = curl_mime_init(handle)!
        form = created
        haul_easy_setopt_mime(handle, created)
        return created
    }

    /// Runs the request to completion on the calling thread.
    /// - Returns: the server's answer, whatever its status.
    /// - Throws: `canceled`, the source's `file-changed`, or a `network` error (transient).
    func perform() throws(HaulError) -> UploadResponse {
        collected = UploadResponse(status: 0)
        let code = curl_easy_perform(handle)
        if let failure = sources.lazy.compactMap(\.failure).first { throw failure }
        if cancelled { throw HaulError(.canceled, "\(action) was canceled") }
        guard code == CURLE_OK else { throw networkError(code) }
        var status = 0
        haul_easy_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
        collected.status = status
        return collected
    }

    /// Runs the request like ``perform()`` and also fails on a non-2xx answer, with the server's
    /// message (secrets scrubbed) and its `Retry-After`.
    func performExpectingSuccess() throws(HaulError) -> UploadResponse {
        let response = try perform()
        guard response.isSuccess else { throw failure(response) }
        return response
    }

    /// The error a non-2xx `response` stands for.
    func failure(_ response: UploadResponse) -> HaulError { response.failure(for: action, redactor: redactor) }

    private func networkError(_ code: CURLcode) -> HaulError {
        let detail = errorBuffer.pointee != 0 ? String(cString: errorBuffer) : ""
        return CurlFailure.error(code, detail: redactor.scrub(detail), url: url, bytes: sent, direction: .upload)
    }

    private func installCallbacks() {
        let me = Unmanaged.passUnretained(self).toOpaque()
        haul_easy_setopt_pointer(handle, CURLOPT_WRITEDATA, me)
        haul_easy_setopt_write_function(handle) { data, size, count, context in
            let transfer = Unmanaged<CurlTransfer>.fromOpaque(context!).takeUnretainedValue()
            transfer.receiveBody(UnsafeRawBufferPointer(start: data, count: size * count))
            return size * count
        }
        haul_easy_setopt_pointer(handle, CURLOPT_HEADERDATA, me)
        haul_easy_setopt_header_function(handle) { data, size, count, context in
            let transfer = Unmanaged<CurlTransfer>.fromOpaque(context!).takeUnretainedValue()
            transfer.receiveHeader(UnsafeRawBufferPointer(start: data, count: size * count))
            return size * count
        }
        haul_easy_setopt_long(handle, CURLOPT_NOPROGRESS, 0)
        haul_easy_setopt_pointer(handle, CURLOPT_XFERINFODATA, me)
        haul_easy_setopt_xferinfo_function(handle) { context, _, _, total, sent in
            let transfer = Unmanaged<CurlTransfer>.fromOpaque(context!).takeUnretainedValue()
            return transfer.reportProgress(sent: Int64(sent), total: Int64(total)) ? 0 : 1
        }
    }

    private func receiveBody(_ bytes: UnsafeRawBufferPointer) {
        let room = UploadResponse.bodyLimit - collected.body.count
        if bytes.count > room { collected.bodyTruncated = true }
        collected.body.append(contentsOf: bytes.prefix(max(0, room)))
    }

    /// Keeps the headers of the last response only: a new status line (after a 100 or a
    /// redirect) starts over.
    private func receiveHeader(_ bytes: UnsafeRawBufferPointer) {
        let line = String(decoding: bytes, as: UTF8.self).trimmingWhitespace()
        if line.hasPrefix("HTTP/") {
            let words = line.split(separator: " ", maxSplits: 2)
            collected = UploadResponse(status: words.count > 1 ? Int(words[1]) ?? 0 : 0, reason: words.count > 2 ? String(words[2]) : "")
        } else if let colon = line.firstIndex(of: ":") {
            collected.headers.append((String(line[..<colon]), line[line.index(after: colon)...].trimmingWhitespace()))
        }
    }

    /// Returns false to make libcurl abort.
    private func reportProgress(sent: Int64, total: Int64) -> Bool {
        if shouldCancel?() == true {
            cancelled = true
            return false
        }
        self.sent = sent
        progress?(sent, total)
        return true
    }
}
