import HaulCore
import HaulQueue
import Testing

/// What an operator types for `haul host-limit` (and `--host`), and what it is told back.
@Suite("host limit input")
struct HostLimitInputTests {
    @Test("a host is named as transfers name it: lower case, without port 80 or 443")
    func namesAsTransfersDo() throws {
        #expect(try HostLimits.parse(host: "Mirror.Example.org") == "mirror.example.org")
        #expect(try HostLimits.parse(host: "a.example:443") == OriginURL.hostKey("https://a.example/x"))
        #expect(try HostLimits.parse(host: "a.example:80") == "a.example")
        #expect(try HostLimits.parse(host: "10.0.0.5:8080") == OriginURL.hostKey("http://10.0.0.5:8080/x"))
        #expect(try HostLimits.parse(host: "[2001:db8::1]:443") == OriginURL.hostKey("https://[2001:db8::1]/x"))
        #expect(try HostLimits.parse(host: "[2001:db8::1]:8443") == OriginURL.hostKey("https://[2001:db8::1]:8443/x"))
        #expect(try HostLimits.parse(host: "*") == "*")
        for bad in ["", "a b", "a/b"] {
            #expect(throws: HaulError.self) { try HostLimits.parse(host: bad) }
        }
    }

    @Test("what a limit did is said in words, one segment in the singular")
    func described() {
        #expect(HostLimits.describe(host: "h", limit: 1) == "h: at most 1 running segment")
        #expect(HostLimits.describe(host: "h", limit: 4) == "h: at most 4 running segments")
        #expect(HostLimits.describe(host: "*", limit: 1) == "default limit: 1 running segment per host")
        #expect(HostLimits.describe(host: "h", limit: 0).contains("paused"))
        #expect(
            HostLimits.describeUnknown(host: "h", namesakes: ["h:8080"])
                == "note: no transfer has come from h yet; transfers came from h:8080: name one of those to limit them")
    }
}
