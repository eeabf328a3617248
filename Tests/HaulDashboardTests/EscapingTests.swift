import HaulDashboard
import Testing

@Suite struct EscapingTests {
    @Test func htmlEscapesEveryMarkupCharacter() {
        #expect(HTML.escape(#"<script>alert("x")</script> & 'y'"#) == "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;y&#39;")
        #expect(HTML.escape("plain · ünïcode") == "plain · ünïcode")
        #expect(HTML.escape("\" onmouseover=\"x") == "&quot; onmouseover=&quot;x")
    }

    @Test func urlComponentsAndQueries() {
        #expect(HTML.urlComponent("a b/c?d&e=f*") == "a%20b%2Fc%3Fd%26e%3Df%2A")
        #expect(HTML.urlComponent("mirror.example.org:8080") == "mirror.example.org%3A8080")
        #expect(HTML.query([("state", "failed"), ("batch", nil), ("q", "a&b"), ("host", "")]) == "?state=failed&q=a%26b")
        #expect(HTML.query([("batch", nil)]) == "")
    }

    @Test func formFieldsDecode() {
        let fields = HTML.formFields(Array("csrf=ab%2Fc&token=a+b%3D&empty=&bad=%zz%4".utf8))
        #expect(fields["csrf"] == "ab/c")
        #expect(fields["token"] == "a b=")
        #expect(fields["empty"] == "")
        #expect(fields["bad"] == "%zz%4")
    }
}
