import CCurl
import HaulCore
import Testing

@testable import HaulHTTP

/// libcurl results as users read them: what went wrong, in words, never a `CURLcode`.
@Suite("libcurl failures in words")
struct CurlFailureTests {
    @Test("a response header line past libcurl's limit is the origin's doing, not this machine's lack of memory")
    func oversizedHeaderLine() {
        let error = CurlFailure.error(CURLE_OUT_OF_MEMORY, detail: "Out of memory", url: "http://origin.test/f.bin", bytes: 0)
        #expect(error.code == .badOrigin)
        #expect(error.message.contains("origin origin.test sent a response header line longer than libcurl accepts"), "\(error)")
    }

    @Test("a malformed response says so and names the origin")
    func malformedResponse() {
        let error = CurlFailure.error(CURLE_WEIRD_SERVER_REPLY, detail: "Invalid Content-Length: value", url: "http://origin.test/f.bin", bytes: 0)
        #expect(error.code == .badOrigin)
        #expect(error.description == "origin origin.test sent a malformed HTTP response: Invalid Content-Length: value", "\(error)")
    }

    /// One classification for every peer: an S3 endpoint's untrusted certificate is permanent
    /// and names the store's setting; a refused connection to it is worth another attempt.
    @Test("an S3 endpoint's untrusted certificate fails at once naming AWS_CA_BUNDLE; a refused connection is retried")
    func storeFailures() {
        let url = "https://store.test:9000/bucket/key"
        let tls = CurlFailure.error(
            CURLE_PEER_FAILED_VERIFICATION, detail: "SSL certificate problem: unable to get local issuer certificate", url: url, bytes: 0,
            direction: .store)
        #expect(tls.code == .tlsVerify && !tls.isTransient)
        #expect(tls.message.hasPrefix("the S3 store's TLS certificate is not trusted (store.test:9000): SSL certificate problem"), "\(tls)")
        #expect(tls.hint?.contains("AWS_CA_BUNDLE") == true && tls.hint?.contains("--ca-cert") == false, "\(tls)")
        let refused = CurlFailure.error(CURLE_COULDNT_CONNECT, detail: "", url: url, bytes: 0, direction: .store)
        #expect(refused.code == .connect && refused.isTransient)
        #expect(refused.hint == "is the S3 endpoint store.test:9000 up and reachable from this machine?", "\(refused)")
    }

    /// Whether an error is retried is the retrying caller's to say; after the last attempt the
    /// failure says how many were made and promises nothing.
    @Test("a failure given up says how many attempts were made, and no hint promises another")
    func givenUp() {
        let full = BodyLimit(bytes: 1000, isFreeSpace: true).error
        #expect(full.isTransient && !full.description.contains("retried"), "\(full)")
        #expect(full.givenUp(after: 6).description.contains("(gave up after 6 attempts); free space on the storage root"))
        #expect(full.givenUp(after: 1).message.hasSuffix("(gave up after 1 attempt)"))
    }
}
