import HaulCore
import HaulHTTP
import Testing

@Suite("redirect rule")
struct RedirectRuleTests {
    let headers = ["Authorization: Bearer t", "Cookie: a=b", "X-Api-Key: k", "x-auth-token: z", "Proxy-Authorization: p", "Accept: */*"]

    @Test func secretHeadersStayOnTheirOrigin() throws {
        let request = FetchRequest(url: "https://a.example/file", headerLines: headers, first: 0, last: 9)
        let same = try request.following("/elsewhere?x=1", hop: 1)
        #expect(same.url == "https://a.example/elsewhere?x=1")
        #expect(same.headerLines == headers)
        #expect(same.rangeValue == "bytes=0-9")
        for other in ["https://b.example/file", "https://a.example:8443/file", "https://cdn.a.example/file"] {
            let next = try request.following(other, hop: 1)
            #expect(next.headerLines == ["Accept: */*"], "\(other)")
        }
    }

    @Test func urlCredentialsGoOnlyToTheSameOrigin() throws {
        let request = FetchRequest(url: "https://u:p@a.example/file")
        #expect(try request.following("/next", hop: 1).url == "https://u:p@a.example/next")
        #expect(try request.following("https://b.example/next", hop: 1).url == "https://b.example/next")
    }

    @Test func downgradesNeedPermission() throws {
        var request = FetchRequest(url: "https://a.example/file")
        let refused = #expect(throws: HaulError.self) { try request.following("http://a.example/file", hop: 1) }
        #expect(refused?.code == .redirectDowngrade)
        request.allowDowngrade = true
        #expect(try request.following("http://a.example/file", hop: 1).url == "http://a.example/file")
        #expect(try FetchRequest(url: "http://a.example/").following("https://a.example/", hop: 1).url == "https://a.example/")
    }

    @Test func schemesAndLoops() throws {
        let request = FetchRequest(url: "http://a.example/file")
        for location in ["ftp://a.example/x", "file:///etc/passwd", "gopher://a.example/"] {
            let error = #expect(throws: HaulError.self) { try request.following(location, hop: 1) }
            #expect(error?.code == .redirectScheme)
        }
        let loop = #expect(throws: HaulError.self) { try request.following("/again", hop: FetchRequest.maximumRedirects + 1) }
        #expect(loop?.code == .redirects)
    }
}
