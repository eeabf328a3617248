import HaulCore
import HaulTestSupport
import Testing

@testable import HaulMetrics

@Suite struct MetricsAddressTests {
    @Test(
        arguments: [
            ("127.0.0.1:9464", [127, 0, 0, 1], 9464),
            ("0.0.0.0:1", [0, 0, 0, 0], 1),
            ("localhost:65535", [127, 0, 0, 1], 65535),
            ("10.20.30.255:8080", [10, 20, 30, 255], 8080),
        ] as [(String, [UInt8], UInt16)])
    func acceptsIPv4(text: String, bytes: [UInt8], port: UInt16) throws {
        let address = try MetricsAddress.parse(text)
        #expect(address.family == .ipv4)
        #expect(address.bytes == bytes)
        #expect(address.port == port)
        #expect(address.description == text)
    }

    @Test func acceptsBracketedIPv6() throws {
        let loopback = try MetricsAddress.parse("[::1]:9464")
        #expect(loopback.family == .ipv6)
        #expect(loopback.bytes == Array(repeating: 0, count: 15) + [1])
        #expect(loopback.port == 9464)
        let any = try MetricsAddress.parse("[::]:80")
        #expect(any.bytes == Array(repeating: 0, count: 16))
    }

    @Test(arguments: [
        "", "9464", ":9464", "127.0.0.1", "127.0.0.1:", "127.0.0.1:0", "127.0.0.1:65536", "127.0.0.1:-1",
        "127.0.0.1:+80", "127.0.0.1:80x", "127.0.0.1:999999", "127.0.0.1: 80", "256.0.0.1:80", "1.2.3:80",
        "1.2.3.4.5:80", "01.2.3.4:80", "1..3.4:80", "example.com:80", "LOCALHOST:80", "::1:9464", "[::1]",
        "[::1]9464", "[::1:9464", "[nope]:80", "[fe80::1%lo]:80", " 127.0.0.1:80", "127.0.0.1:80 ",
    ])
    func rejectsMalformed(text: String) {
        #expect {
            _ = try MetricsAddress.parse(text)
        } throws: { error in
            guard let error = error as? HaulError else { return false }
            return error.code == .usage && error.message.hasPrefix("invalid --metrics-addr '\(text)'") && error.hint != nil
        }
    }

    @Test func everyPortInRangeParses() throws {
        for port in [1, 2, 80, 1023, 1024, 9464, 65534, 65535] {
            #expect(try MetricsAddress.parse("127.0.0.1:\(port)").port == UInt16(port))
        }
    }

    @Test func messageSaysWhatIsWrong() {
        #expect(
            throws: HaulError.usage(
                "invalid --metrics-addr '127.0.0.1:0': the port must be a number from 1 to 65535",
                hint: "use HOST:PORT such as 127.0.0.1:9464, 0.0.0.0:9464 or [::1]:9464")
        ) {
            _ = try MetricsAddress.parse("127.0.0.1:0")
        }
    }
}
