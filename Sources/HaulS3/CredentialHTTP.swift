import CCurl
import Foundation
import HaulCore
import HaulHTTP

/// The small requests of the credential chain (STS, the container and instance metadata
/// endpoints), one libcurl easy handle each, on the calling thread. Answers are small.
enum CredentialHTTP {
    struct Answer {
        var status: Int
        var body: Data
    }

    /// How to sign a request with SigV4 (STS `AssumeRole`).
    struct Signing {
        var region: String
        var service: String
        var credentials: S3Credentials
    }

    /// Sends one request; network failures throw `network` naming `what` (never a header).
    static func send(
        _ method: String, _ url: String, headers: [String] = [], body: Data? = nil, signing: Signing? = nil, caBundle: String? = nil,
        timeout: Int = 30, what: String
    ) throws -> Answer {
        guard let handle = curl_easy_init() else { throw HaulError(.curl, "libcurl could not create a handle") }
        var list: UnsafeMutablePointer<curl_slist>?
        let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        errorBuffer[0] = 0
        let sink = Sink()
        defer {
            curl_easy_cleanup(handle)
            curl_slist_free_all(list)
            errorBuffer.deallocate()
        }
        var lines = headers
        CurlSetup.common(handle, url: url, tls: TLSOptions(caBundle: caBundle), stallSeconds: timeout, errorBuffer: errorBuffer)
        haul_easy_setopt_long(handle, CURLOPT_CONNECTTIMEOUT, min(timeout, 30))
        haul_easy_setopt_long(handle, CURLOPT_TIMEOUT, timeout)
        if let signing {
            haul_easy_setopt_string(handle, CURLOPT_AWS_SIGV4, "aws:amz:\(signing.region):\(signing.service)")
            haul_easy_setopt_string(handle, CURLOPT_USERNAME, signing.credentials.accessKeyID)
            haul_easy_setopt_string(handle, CURLOPT_PASSWORD, signing.credentials.secretAccessKey)
            if let token = signing.credentials.sessionToken { lines.append("x-amz-security-token: \(token)") }
        }
        for line in lines { list = curl_slist_append(list, line) }
        haul_easy_setopt_slist(handle, CURLOPT_HTTPHEADER, list)
        if let body {
            if method != "POST" { haul_easy_setopt_string(handle, CURLOPT_CUSTOMREQUEST, method) }
            haul_easy_setopt_long(handle, CURLOPT_POSTFIELDSIZE, body.count)
            haul_easy_setopt_string(handle, CURLOPT_COPYPOSTFIELDS, String(decoding: body, as: UTF8.self))
        } else if method != "GET" {
            haul_easy_setopt_string(handle, CURLOPT_CUSTOMREQUEST, method)
        }
        let me = Unmanaged.passUnretained(sink).toOpaque()
        haul_easy_setopt_pointer(handle, CURLOPT_WRITEDATA, me)
        haul_easy_setopt_write_function(handle, collect)
        let code = curl_easy_perform(handle)
        guard code == CURLE_OK else {
            let detail = errorBuffer[0] != 0 ? SafeText.cleanLine(String(cString: errorBuffer)) : String(cString: curl_easy_strerror(code))
            throw HaulError(.network, "cannot reach \(what): \(detail)", transient: true)
        }
        var status = 0
        haul_easy_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
        return Answer(status: status, body: sink.body)
    }

    private final class Sink {
        var body = Data()
    }

    private static let collect: haul_data_callback = { data, size, count, userdata in
        let sink = Unmanaged<Sink>.fromOpaque(userdata!).takeUnretainedValue()
        if sink.body.count < 1 << 20 { sink.body.append(contentsOf: UnsafeRawBufferPointer(start: data, count: size * count)) }
        return size * count
    }
}
