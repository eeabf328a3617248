import Foundation
import HaulCore
import Testing

@Suite("signed-URL redaction, control and bidi characters, origins")
struct SecurityTextTests {
    static let signedURLs: [(String, String)] = [
        (
            "https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4&X-Amz-Credential=AKIA%2F2026&X-Amz-Security-Token=FQoG&X-Amz-Signature=9f86",
            "https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4&X-Amz-Credential=***&X-Amz-Security-Token=***&X-Amz-Signature=***"
        ),
        (
            "https://storage.googleapis.com/b/o?X-Goog-Signature=abc&x-goog-credential=x",
            "https://storage.googleapis.com/b/o?X-Goog-Signature=***&x-goog-credential=***"
        ),
        ("https://a.blob.core.windows.net/c/b?sv=2021&sig=AbC%3D&se=2026", "https://a.blob.core.windows.net/c/b?sv=2021&sig=***&se=2026"),
        ("https://h/x?api_key=1&apikey=2&client_secret=3&private_token=4&q=ok", "https://h/x?api_key=***&apikey=***&client_secret=***&private_token=***&q=ok"),
        ("https://h/x?X%2DAmz%2DSignature=abc&%73ig=def", "https://h/x?X%2DAmz%2DSignature=***&%73ig=***"),
        ("https://h/x?API_KEY=1", "https://h/x?API_KEY=***"),
        ("https://h/x?page=2&sort=name", "https://h/x?page=2&sort=name"),
    ]

    @Test("signed-URL query values are hidden wherever a URL is shown", arguments: signedURLs)
    func signedURLRedaction(url: String, shown: String) {
        #expect(Redaction.url(url) == shown)
    }

    /// Query parameter names whose values are secrets, in the forms they are met: any name
    /// holding token, secret, sig, key, auth, session, pass, pwd, jwt, credential or policy.
    static let secretNames = [
        "token", "access_token", "access-token", "accessToken", "auth_token", "refresh_token", "id_token", "private_token",
        "X-Amz-Security-Token", "x-amz-signature", "X-Amz-Credential", "X-Goog-Signature", "x-goog-credential", "sig", "sv-sig",
        "Signature", "key", "api-key", "api_key", "apikey", "API_KEY", "access_key", "AccessKeyId", "Key-Pair-Id", "secret",
        "client_secret", "password", "passwd", "pass", "pwd", "jwt", "session", "sessionid", "SESSION_ID", "auth", "Authorization",
        "Policy", "credential", "credentials", "%74oken", "X%2DAmz%2DSignature", "api%5Fkey", "my+secret",
    ]
    /// Names that must stay readable: nothing in them says secret.
    static let plainNames = ["page", "sort", "q", "sv", "se", "sp", "X-Amz-Algorithm", "X-Amz-Date", "X-Amz-Expires", "Expires", "id", "name", "v"]

    @Test("a query parameter whose name says secret has its value hidden", arguments: secretNames)
    func secretParameter(name: String) {
        let url = "https://h.example/f.iso?page=2&\(name)=s3cr3tV4lue&sort=asc"
        #expect(Redaction.isSecretQueryKey(name))
        #expect(Redaction.url(url) == "https://h.example/f.iso?page=2&\(name)=***&sort=asc")
        #expect(!Redaction.url(url).contains("s3cr3tV4lue"))
        #expect(Redaction.secrets(in: url).contains("s3cr3tV4lue"))
    }

    @Test("a query parameter whose name says nothing secret is shown", arguments: plainNames)
    func plainParameter(name: String) {
        #expect(!Redaction.isSecretQueryKey(name))
        #expect(Redaction.url("https://h.example/f?\(name)=visible") == "https://h.example/f?\(name)=visible")
    }

    @Test func secretsInEveryFormOfQuery() {
        // `;` separates pairs for some servers; an empty value has nothing to hide but is marked alike.
        #expect(Redaction.url("https://h/x?a=1;token=abc;b=2") == "https://h/x?a=1;token=***;b=2")
        #expect(Redaction.url("https://h/x?token=") == "https://h/x?token=***")
        #expect(Redaction.url("https://h/x?token") == "https://h/x?token")
        #expect(Redaction.url("https://h/x?&&jwt=a.b.c&") == "https://h/x?&&jwt=***&")
        #expect(Redaction.url("https://u:p4ss@h/x?Policy=eyJ&Key-Pair-Id=K2&Signature=Zm9v") == "https://***@h/x?Policy=***&Key-Pair-Id=***&Signature=***")
        #expect(Redaction.secrets(in: "https://bob:pa55@h/x?access-token=a%2Bb&q=1") == ["bob:pa55", "bob", "pa55", "a%2Bb", "a+b"])
        #expect(Redaction.secrets(in: "https://h/x?q=1") == [])
    }

    /// Text a hostile peer may send, and how it is shown on one line: every control, escape
    /// and direction character becomes U+FFFD (tabs and line breaks a space); nothing else changes.
    static let hostileLines: [(String, String)] = [
        ("Not \u{1B}]52;c;aGk=\u{07}Found", "Not \u{FFFD}]52;c;aGk=\u{FFFD}Found"),
        ("\u{1B}[2J\u{1B}[31mred", "\u{FFFD}[2J\u{FFFD}[31mred"),
        ("c1 \u{9B}31m \u{85}\u{80}\u{9F}", "c1 \u{FFFD}31m \u{FFFD}\u{FFFD}\u{FFFD}"),
        ("invoice\u{202E}fdp.exe", "invoice\u{FFFD}fdp.exe"),
        ("\u{202A}\u{202B}\u{202C}\u{202D}\u{2066}\u{2067}\u{2068}\u{2069}\u{200E}\u{200F}\u{061C}", String(repeating: "\u{FFFD}", count: 11)),
        ("bell\u{07}nul\u{0}del\u{7F}bs\u{08}", "bell\u{FFFD}nul\u{FFFD}del\u{FFFD}bs\u{FFFD}"),
        ("two\nlines\r\nand\ttab", "two lines  and tab"),
        ("forged\u{2028}2026-12-06 INFO ok\u{2029}end", "forged 2026-12-06 INFO ok end"),
        ("Grüße 日本 🚀 «ok» \u{A0}\u{200B}", "Grüße 日本 🚀 «ok» \u{A0}\u{200B}"),
    ]

    @Test("control, escape and direction characters are replaced visibly", arguments: hostileLines)
    func cleanLine(text: String, shown: String) {
        #expect(SafeText.cleanLine(text) == shown)
        #expect(!SafeText.cleanLine(text).unicodeScalars.contains(where: SafeText.isUnsafe))
    }

    @Test func cleanTextKeepsLinesAndTabs() {
        #expect(SafeText.cleanText("{\n\t\"a\": 1\r\n}") == "{\n\t\"a\": 1\n}")
        #expect(SafeText.cleanText("x\u{1B}[2Jy\rz\u{9B}\u{202E}\r") == "x\u{FFFD}[2Jy\u{FFFD}z\u{FFFD}\u{FFFD}\u{FFFD}")
        #expect(SafeText.cleanText("plain\ntext") == "plain\ntext")
    }

    @Test func namesLoseTheirControlAndBidiCharacters() {
        #expect(SafeText.strip("invoice\u{202E}fdp.exe") == "invoicefdp.exe")
        #expect(SafeText.strip("bell\u{07}esc\u{1B}[31mnul\u{0}del\u{7F}c1\u{85}\u{9B}end\ttab") == "bellesc[31mnuldelc1endtab")
        #expect(SafeText.strip("Grüße 日本 🚀.txt") == "Grüße 日本 🚀.txt")
    }

    @Test func originsCompareSchemeHostAndPort() throws {
        let origin = try #require(Origin(url: "https://Example.org/a?b"))
        #expect(origin == Origin(url: "https://example.org:443/other"))
        #expect(origin != Origin(url: "http://example.org/a"))
        #expect(origin != Origin(url: "https://example.org:8443/a"))
        #expect(origin != Origin(url: "https://example.org.evil/a"))
        #expect(Origin(url: "http://[::1]:8080/")?.host == "::1")
        #expect(Origin(url: "file:///etc/passwd") == nil)
        #expect(Origin(url: "/relative") == nil)
        #expect(Origin.resolve("../b", against: "https://h/x/y/z") == "https://h/x/b")
    }
}

@Suite("address policy")
struct AddressPolicyRuleTests {
    static let refused = [
        "127.0.0.1", "127.255.0.3", "10.1.2.3", "172.16.0.1", "172.31.255.255", "192.168.1.1", "169.254.169.254", "100.64.0.1", "0.0.0.0",
        "224.0.0.1", "255.255.255.255", "::1", "::", "fe80::1", "fd00::1", "fc00::5", "ff02::1", "::ffff:127.0.0.1", "::ffff:10.0.0.1",
        "64:ff9b::a9fe:a9fe",
    ]
    static let allowed = ["1.1.1.1", "8.8.8.8", "172.32.0.1", "192.0.2.1", "2606:4700::1111", "::ffff:8.8.8.8", "100.128.0.1"]

    /// IPv6 addresses carrying a non-public IPv4 one, with the range and form the refusal names.
    static let embedded: [(String, String)] = [
        ("::ffff:127.0.0.1", "a loopback address (127.0.0.1 in IPv4-mapped form)"),
        ("0:0:0:0:0:ffff:7f00:1", "a loopback address (127.0.0.1 in IPv4-mapped form)"),
        ("::ffff:169.254.169.254", "a link-local address (169.254.169.254 in IPv4-mapped form)"),
        ("::127.0.0.1", "a loopback address (127.0.0.1 in IPv4-compatible form)"),
        ("::10.0.0.1", "a private address (10.0.0.1 in IPv4-compatible form)"),
        ("64:ff9b::7f00:1", "a loopback address (127.0.0.1 in NAT64 form)"),
        ("64:ff9b::192.168.0.1", "a private address (192.168.0.1 in NAT64 form)"),
        ("2002:7f00:1::", "a loopback address (127.0.0.1 in 6to4 form)"),
        ("2002:a9fe:a9fe:1:2:3:4:5", "a link-local address (169.254.169.254 in 6to4 form)"),
        ("2002:c0a8:101::1", "a private address (192.168.1.1 in 6to4 form)"),
        ("2001:0:7f00:1::f7f7:f7f7", "a loopback address (127.0.0.1 in Teredo server form)"),
        // Teredo's client address is stored with every bit flipped: 80ff:fffe is 127.0.0.1.
        ("2001:0:808:808::80ff:fffe", "a loopback address (127.0.0.1 in Teredo client form)"),
        ("2001:0:808:808:8000:ffff:f5ff:fffe", "a private address (10.0.0.1 in Teredo client form)"),
        ("2001:0:808:808::5601:5601", "a link-local address (169.254.169.254 in Teredo client form)"),
        ("64:ff9b:1::808:808", "a local-use NAT64 address"),
        ("64:ff9b:1:ffff::1", "a local-use NAT64 address"),
    ]

    /// IPv6 addresses carrying public IPv4 ones, or looking like such forms without being one.
    static let embeddedPublic = [
        "::8.8.8.8", "64:ff9b::808:808", "2002:808:808::1", "2001:0:808:808::f7f7:f7f7", "2001:4860:4860::8888", "2003:7f00:1::",
        "64:ff9b:2::7f00:1",
    ]

    @Test("IPv6 forms carrying a non-public IPv4 address are refused, naming it", arguments: embedded)
    func embeddedIPv4(text: String, range: String) throws {
        let bytes = try #require(AddressPolicy.parse(text))
        #expect(AddressPolicy.nonPublicRange(bytes) == range)
        #expect(AddressPolicy(denyPrivate: true).refusal(bytes) == "\(AddressPolicy.format(bytes)) is \(range)")
    }

    @Test("IPv6 forms carrying a public IPv4 address pass", arguments: embeddedPublic)
    func embeddedPublicIPv4(text: String) throws {
        #expect(AddressPolicy(denyPrivate: true).refusal(try #require(AddressPolicy.parse(text))) == nil)
    }

    @Test("non-public addresses are refused", arguments: refused)
    func refusedAddresses(text: String) throws {
        let policy = AddressPolicy(denyPrivate: true)
        let bytes = try #require(AddressPolicy.parse(text))
        #expect(policy.refusal(bytes) != nil)
        #expect(AddressPolicy.open.refusal(bytes) == nil)
    }

    @Test("public addresses pass", arguments: allowed)
    func publicAddresses(text: String) throws {
        #expect(AddressPolicy(denyPrivate: true).refusal(try #require(AddressPolicy.parse(text))) == nil)
    }

    @Test func localhostNamesAreThoseOfRFC6761() {
        for name in ["localhost", "localhost.", "LocalHost", "a.localhost", "x.y.LOCALHOST."] {
            #expect(AddressPolicy.isLocalhostName(name), "\(name)")
        }
        for name in ["localhost.example", "mylocalhost", "localhost..", "127.0.0.1", "example.com."] {
            #expect(!AddressPolicy.isLocalhostName(name), "\(name)")
        }
    }

    @Test("addresses are written back in their usual text, the longest IPv6 one included")
    func formatting() throws {
        for text in ["8.8.8.8", "255.255.255.255", "2606:4700::1111", "::ffff:8.8.8.8", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"] {
            #expect(AddressPolicy.format(try #require(AddressPolicy.parse(text))) == text)
        }
    }

    @Test func allowListExceptions() throws {
        let policy = AddressPolicy(denyPrivate: true, allowed: [try .init(parsing: "10.20.0.0/16"), try .init(parsing: "127.0.0.2")])
        #expect(policy.refusal(try #require(AddressPolicy.parse("10.20.3.4"))) == nil)
        #expect(policy.refusal(try #require(AddressPolicy.parse("10.21.3.4"))) == "10.21.3.4 is a private address")
        #expect(policy.refusal(try #require(AddressPolicy.parse("127.0.0.2"))) == nil)
        #expect(policy.refusal(try #require(AddressPolicy.parse("127.0.0.1"))) == "127.0.0.1 is a loopback address")
        #expect(throws: HaulError.self) { try AddressPolicy.Network(parsing: "10.0.0.0/33") }
        #expect(throws: HaulError.self) { try AddressPolicy.Network(parsing: "example.com") }
    }
}
