import Foundation
import HaulCore
import Testing

/// netrc files as curl reads them.
@Suite("netrc")
struct NetrcTests {
    @Test("machine entries over one line or several; the first entry for a host wins; hosts match in any case")
    func machines() {
        let netrc = Netrc(
            parsing: """
                machine a.example login alice password pa55
                machine B.Example
                    login bob
                    password "with space"
                machine a.example login second password ignored
                """)
        #expect(netrc.entry(for: "a.example") == Netrc.Entry(machine: "a.example", login: "alice", password: "pa55"))
        #expect(netrc.entry(for: "b.example") == Netrc.Entry(machine: "B.Example", login: "bob", password: "with space"))
        #expect(netrc.entry(for: "c.example") == nil, "no default: no login for other hosts")
    }

    @Test("a login asked for (a URL's user@) picks that login's entry for the host, else default's")
    func entryOfALogin() {
        let netrc = Netrc(parsing: "machine a.example login alice password pa55\nmachine a.example login bob password b0b\ndefault login bob password any\n")
        #expect(netrc.entry(for: "a.example", login: "bob")?.password == "b0b")
        #expect(netrc.entry(for: "other.example", login: "bob")?.password == "any")
        #expect(netrc.entry(for: "a.example", login: "carol") == nil)
    }

    @Test("default is for every host no machine names, wherever it stands")
    func defaultEntry() {
        let netrc = Netrc(parsing: "default login anonymous password guest@\nmachine a.example login alice password pa55\n")
        #expect(netrc.entry(for: "a.example")?.login == "alice")
        #expect(netrc.entry(for: "other.example") == Netrc.Entry(machine: nil, login: "anonymous", password: "guest@"))
    }

    @Test("macdef bodies, comments and account values are skipped")
    func skipped() {
        let netrc = Netrc(
            parsing: """
                # a comment: machine evil.example login x password y
                machine a.example login alice account acct password pa55
                macdef init
                machine b.example login mallory password from-the-macro
                cd /pub

                machine b.example login bob password right
                """)
        #expect(netrc.entry(for: "a.example") == Netrc.Entry(machine: "a.example", login: "alice", password: "pa55"))
        #expect(netrc.entry(for: "b.example")?.password == "right")
        #expect(netrc.entry(for: "evil.example") == nil)
    }

    @Test("quoted tokens with escapes; tabs and CRLF line ends separate tokens")
    func quoting() {
        let netrc = Netrc(parsing: "machine\ta.example\r\nlogin \"al ice\"\r\npassword \"q\\\"uo\\\\te\\t\"\r\n")
        #expect(netrc.entry(for: "a.example") == Netrc.Entry(machine: "a.example", login: "al ice", password: "q\"uo\\te\t"))
    }

    @Test("an entry without a password logs in with an empty one; Basic is login:password in base64")
    func basic() {
        let entry = Netrc(parsing: "machine h login only").entry(for: "h")
        #expect(entry == Netrc.Entry(machine: "h", login: "only", password: ""))
        #expect(Netrc.Entry(machine: "h", login: "Aladdin", password: "open sesame").basicAuthorization == "Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==")
        #expect(Netrc(parsing: "").entries.isEmpty && Netrc(parsing: "login stray password nowhere").entries.isEmpty)
    }
}
