import HaulTestSupport
import Testing

@testable import HaulMetrics

@Suite struct ExpositionFormatTests {
    typealias Label = MetricFamily.Label

    @Test func emptyRendersAsEmptyString() {
        #expect(ExpositionFormat.render([]) == "")
    }

    @Test func counterWithoutLabels() {
        let family = MetricFamily(name: "haul_bytes_fetched_total", help: "Bytes fetched.", kind: .counter, series: [.init(labels: [], value: .scalar(1536))])
        #expect(
            ExpositionFormat.render([family]) == """
                # HELP haul_bytes_fetched_total Bytes fetched.
                # TYPE haul_bytes_fetched_total counter
                haul_bytes_fetched_total 1536

                """)
    }

    @Test func gaugeSeriesKeepTheirOrderAndLabels() {
        let family = MetricFamily(
            name: "haul_segments", help: "Segments by state.", kind: .gauge,
            series: [
                .init(labels: [Label(name: "state", value: "queued")], value: .scalar(7)),
                .init(labels: [Label(name: "state", value: "fetching")], value: .scalar(-2.5)),
                .init(labels: [Label(name: "a", value: "1"), Label(name: "b", value: "2")], value: .scalar(0)),
            ])
        #expect(
            ExpositionFormat.render([family]) == """
                # HELP haul_segments Segments by state.
                # TYPE haul_segments gauge
                haul_segments{state="queued"} 7
                haul_segments{state="fetching"} -2.5
                haul_segments{a="1",b="2"} 0

                """)
    }

    @Test(arguments: [
        ("plain", "plain"),
        ("back\\slash", "back\\\\slash"),
        ("say \"hi\"", "say \\\"hi\\\""),
        ("two\nlines", "two\\nlines"),
        ("\\\"\n", "\\\\\\\"\\n"),
        ("tab\tand ünïcødé ✓", "tab\tand ünïcødé ✓"),
        ("", ""),
        ("\\n is not a newline", "\\\\n is not a newline"),
    ])
    func labelValueEscaping(raw: String, escaped: String) {
        #expect(ExpositionFormat.escapeLabelValue(raw) == escaped)
        let line = ExpositionFormat.sampleLine("m", [Label(name: "l", value: raw)], 1)
        #expect(line == "m{l=\"\(escaped)\"} 1\n")
    }

    @Test(arguments: [
        ("plain", "plain"),
        ("quotes \"stay\"", "quotes \"stay\""),
        ("back\\slash", "back\\\\slash"),
        ("two\nlines", "two\\nlines"),
    ])
    func helpEscaping(raw: String, escaped: String) {
        #expect(ExpositionFormat.escapeHelp(raw) == escaped)
    }

    @Test(arguments: [
        (0.0, "0"), (-0.0, "0"), (1.0, "1"), (42.0, "42"), (-3.0, "-3"), (0.5, "0.5"), (0.005, "0.005"),
        (2.5, "2.5"), (1e-05, "1e-05"), (1.5e20, "1.5e+20"), (9_007_199_254_740_991.0, "9007199254740991"),
        (Double.infinity, "+Inf"), (-Double.infinity, "-Inf"), (Double.nan, "NaN"),
    ])
    func valueFormatting(value: Double, text: String) {
        #expect(ExpositionFormat.formatValue(value) == text)
    }

    @Test func everyFormattedFiniteValueReadsBackExactly() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            let value = Double(bitPattern: generator.next())
            guard value.isFinite else { continue }
            #expect(Double(ExpositionFormat.formatValue(value)) == value)
        }
    }

    @Test func histogramBucketsAreCumulativeWithInfSumAndCount() {
        let family = MetricFamily(
            name: "haul_claim_latency_seconds", help: "Claim latency.", kind: .histogram,
            series: [
                .init(
                    labels: [Label(name: "role", value: "fetcher")],
                    value: .histogram(upperBounds: [0.1, 0.5, 1], counts: [2, 0, 3, 1], sum: 3.25))
            ])
        #expect(
            ExpositionFormat.render([family]) == """
                # HELP haul_claim_latency_seconds Claim latency.
                # TYPE haul_claim_latency_seconds histogram
                haul_claim_latency_seconds_bucket{role="fetcher",le="0.1"} 2
                haul_claim_latency_seconds_bucket{role="fetcher",le="0.5"} 2
                haul_claim_latency_seconds_bucket{role="fetcher",le="1"} 5
                haul_claim_latency_seconds_bucket{role="fetcher",le="+Inf"} 6
                haul_claim_latency_seconds_sum{role="fetcher"} 3.25
                haul_claim_latency_seconds_count{role="fetcher"} 6

                """)
    }

    @Test func emptyHistogramWithoutLabels() {
        let family = MetricFamily(
            name: "h", help: "", kind: .histogram,
            series: [
                .init(labels: [], value: .histogram(upperBounds: [1], counts: [0, 0], sum: 0))
            ])
        #expect(
            ExpositionFormat.render([family]) == """
                # HELP h 
                # TYPE h histogram
                h_bucket{le="1"} 0
                h_bucket{le="+Inf"} 0
                h_sum 0
                h_count 0

                """)
    }

    @Test func familiesFollowEachOther() {
        let a = MetricFamily(name: "a_total", help: "A.", kind: .counter, series: [.init(labels: [], value: .scalar(1))])
        let b = MetricFamily(name: "b", help: "B.", kind: .gauge, series: [.init(labels: [], value: .scalar(2))])
        let text = ExpositionFormat.render([a, b])
        #expect(
            text.split(separator: "\n").map(String.init) == [
                "# HELP a_total A.", "# TYPE a_total counter", "a_total 1", "# HELP b B.", "# TYPE b gauge", "b 2",
            ])
    }
}
