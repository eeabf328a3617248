import Foundation
import HaulHTTP
import HaulTestSupport
import Testing

@testable import HaulUpload

@Suite struct RetryPolicyTests {
    let policy = RetryPolicy(attempts: 5, baseDelay: 0.5, maxDelay: 10)

    @Test func backoffDoublesUpToTheCap() {
        #expect(policy.delay(forAttempt: 1, jitter: 1) == 0.5)
        #expect(policy.delay(forAttempt: 2, jitter: 1) == 1)
        #expect(policy.delay(forAttempt: 4, jitter: 1) == 4)
        #expect(policy.delay(forAttempt: 6, jitter: 1) == 10)
        #expect(policy.delay(forAttempt: 10_000, jitter: 1) == 10)
    }

    @Test func jitterKeepsTheUpperHalf() {
        #expect(policy.delay(forAttempt: 3, jitter: 0) == 1)
        #expect(policy.delay(forAttempt: 3, jitter: 0.5) == 1.5)
        for jitter in stride(from: 0.0, to: 1.0, by: 0.05) {
            #expect((1..<2).contains(policy.delay(forAttempt: 3, jitter: jitter)))
        }
    }

    @Test func aLongerRetryAfterWins() {
        #expect(policy.delay(forAttempt: 1, retryAfter: 3, jitter: 1) == 3)
        #expect(policy.delay(forAttempt: 5, retryAfter: 0, jitter: 1) == 8)
        #expect(policy.delay(forAttempt: 1, retryAfter: 7200, jitter: 1) == 3600)
    }

    @Test func policiesClampNonsense() {
        let clamped = RetryPolicy(attempts: 0, baseDelay: -1, maxDelay: -1)
        #expect(clamped.attempts == 1)
        #expect(clamped.delay(forAttempt: 3, jitter: 0.5) == 0)
    }

    @Test func parsesRetryAfterSecondsAndDates() {
        let now = Date(timeIntervalSince1970: 1_445_412_480)  // Wed, 21 Oct 2015 07:28:00 GMT
        #expect(RetryPolicy.parseRetryAfter("120", now: now) == 120)
        #expect(RetryPolicy.parseRetryAfter(" 7 ", now: now) == 7)
        #expect(RetryPolicy.parseRetryAfter("Wed, 21 Oct 2015 07:28:30 GMT", now: now) == 30)
        #expect(RetryPolicy.parseRetryAfter("Wednesday, 21-Oct-15 07:29:00 GMT", now: now) == 60)
        #expect(RetryPolicy.parseRetryAfter("Wed Oct 21 07:28:10 2015", now: now) == 10)
        #expect(RetryPolicy.parseRetryAfter("Tue, 20 Oct 2015 07:28:00 GMT", now: now) == 0)
        #expect(RetryPolicy.parseRetryAfter("-5", now: now) == nil)
        #expect(RetryPolicy.parseRetryAfter("soon", now: now) == nil)
        #expect(RetryPolicy.parseRetryAfter("", now: now) == nil)
    }
}

@Suite struct RedactionTests {
    @Test func secretsAreScrubbedFromFreeText() {
        let redactor = Redactor(
            url: "https://bob:pa55word@host/up", headers: ["Authorization: Basic Ym9iOnBhNTV3b3Jk", "Cookie: sid=42abcdef", "X-Trace: 42"])
        let text = "server said: bad token Ym9iOnBhNTV3b3Jk for bob:pa55word (sid=42abcdef) trace 42"
        let scrubbed = redactor.scrub(text)
        #expect(!scrubbed.contains("Ym9iOnBhNTV3b3Jk"))
        #expect(!scrubbed.contains("pa55word"))
        #expect(!scrubbed.contains("42abcdef"))
        #expect(scrubbed.contains("trace 42"))
        #expect(Redactor(url: "http://h/", headers: ["Authorization: abc"]).scrub("abc") == "abc")
    }

    @Test("a server echoing a secret query value of the URL has it scrubbed, as written and decoded")
    func querySecretsAreScrubbedFromFreeText() {
        let redactor = Redactor(url: "https://host/up?access-token=tok3n%2Bvalue&session=s3ss10n-id&page=2", headers: [])
        let text = "denied: tok3n%2Bvalue (tok3n+value) in session s3ss10n-id, page 2"
        #expect(redactor.scrub(text) == "denied: *** (***) in session ***, page 2")
    }

    @Test func failuresNameTheStatusAndTheServersMessage() {
        let redactor = Redactor(url: "http://h/", headers: ["Authorization: Bearer tok-123456"])
        let forbidden = UploadResponse(status: 403, reason: "Forbidden", body: Data(#"{"detail":"tok-123456 lacks scope"}"#.utf8))
        let error = forbidden.failure(for: "upload to http://h/", redactor: redactor)
        #expect(error.code == .uploadRejected && !error.isTransient)
        #expect(error.message == "upload to http://h/ failed with 403 Forbidden: *** lacks scope")
        let busy = UploadResponse(status: 503, headers: [("Retry-After", "2")], body: Data("overloaded\nplease wait".utf8))
        #expect(busy.failure(for: "upload", redactor: redactor).isTransient)
        // No reason phrase (as over HTTP/2): the standard one.
        #expect(busy.failure(for: "upload", redactor: redactor).message == "upload failed with 503 Service Unavailable: overloaded")
        #expect(busy.failure(for: "upload", redactor: redactor).retryAfter == 2)
        #expect(UploadResponse(status: 429).failure(for: "upload", redactor: redactor).isTransient)
    }

    /// An HTML error page says nothing on its first line (`<html>`): its title does, unless it
    /// only repeats the status (as nginx's pages do).
    @Test func htmlErrorPagesGiveTheirTitle() {
        let redactor = Redactor(url: "http://h/", headers: [])
        let nginx = UploadResponse(
            status: 413, reason: "Request Entity Too Large",
            body: Data(
                "<html>\r\n<head><title>413 Request Entity Too Large</title></head>\r\n<body>\r\n<center><h1>413 Request Entity Too Large</h1></center>\r\n"
                    .utf8))
        #expect(nginx.failure(for: "upload", redactor: redactor).message == "upload failed with 413 Request Entity Too Large")
        let quota = UploadResponse(
            status: 403, reason: "Forbidden",
            body: Data("<!DOCTYPE html>\n<html><head><TITLE>Quota <b>exceeded</b>\n for team-a</TITLE></head></html>".utf8))
        #expect(quota.failure(for: "upload", redactor: redactor).message == "upload failed with 403 Forbidden: Quota exceeded for team-a")
        let heading = UploadResponse(status: 400, reason: "Bad Request", body: Data("<html><body><h1>Missing field 'file'</h1></body></html>".utf8))
        #expect(heading.failure(for: "upload", redactor: redactor).message == "upload failed with 400 Bad Request: Missing field 'file'")
    }

    @Test func jsonBodiesArePrettyPrinted() {
        let response = UploadResponse(status: 200, body: Data(#"{"b":[1,2],"a":"x/y"}"#.utf8))
        #expect(response.prettyBody == "{\n  \"a\" : \"x/y\",\n  \"b\" : [\n    1,\n    2\n  ]\n}")
        #expect(UploadResponse(status: 200, body: Data("plain".utf8)).prettyBody == "plain")
    }
}
