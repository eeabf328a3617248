import Testing

@testable import HaulDashboard

@Suite struct ChartTests {
    @Test func theYAxisEndsAtOneTwoOrFiveTimesAPowerOfTen() {
        #expect(Chart.axisTop(0) == 2, "an empty queue still has a 0, 1, 2 axis")
        #expect(Chart.axisTop(7) == 10)
        #expect(Chart.axisTop(130) == 200)
        #expect(Chart.axisTop(4_500_000) == 5_000_000)
        #expect(Chart.axisTop(1000) == 1000)
        #expect(Chart.axisTop(59 * 1_048_576, unit: .bytesPerSecond) == 100 * 1_048_576, "bytes: round in MiB")
        #expect(Chart.axisTop(3000, unit: .bytesPerSecond) == 5 * 1024)
    }

    @Test func axesAreLabelledWithUnitsAndMinutes() {
        let minute = (0..<60).map { (minute: Int64($0 * 60), bytes: Int64($0) * 60 << 20) }
        let svg = Chart.throughput(minute)
        #expect(svg.contains(">0 B/s</text>"), "the y axis starts at 0 in bytes per second")
        #expect(svg.contains("data-axis-top>100.0 MiB/s</text>"), "and ends at the next round figure above the peak (59 MiB/s)")
        #expect(svg.contains(">−45 min</text>") && svg.contains(">now</text>"), "the x axis counts minutes back to now")
        #expect(svg.contains(">bytes/s</text>") && svg.contains("minutes ago"), "both axes are titled")
        #expect(!svg.contains("style="), "no style attribute: the CSP allows none")
    }

    @Test func minutesWithoutASampleAreSkippedNotDrawnAsZero() {
        let points = Chart.points([1, nil, 1], top: 1)
        #expect(points.split(separator: " ").count == 2)
    }

    @Test func aChosenWindowAddsMinutesUpIntoAtMost72Points() {
        #expect(ChartWindow.named(nil) == .standard && ChartWindow.named("2d") == .standard, "the hour unless a known window is named")
        let day = ChartWindow.named("24h")
        #expect(day.points == 72)
        let sums = day.points(Array(repeating: Int64(1), count: day.minutes)) { $0.reduce(0, +) }
        #expect(sums.count == 72 && sums.allSatisfy { $0 == 20 }, "each point adds up 20 minutes")
        #expect(ChartWindow.all.allSatisfy { $0.points <= 72 && $0.minutes % $0.step == 0 })
    }

    @Test func aLongWindowIsLabelledInHoursAndPointsPerMinutes() {
        let window = ChartWindow.named("6h")
        let minutes = (0..<window.points).map { (minute: Int64($0 * 300), bytes: Int64(300) << 20) }
        let svg = Chart.throughput(minutes, window: window)
        #expect(svg.contains(">−3 h</text>") && svg.contains(">now</text>") && !svg.contains("min</text>"), "ticks every hour")
        #expect(svg.contains("time ago (1 point per 5 minutes)"))
        #expect(svg.contains("data-axis-top>1.0 MiB/s</text>"), "300 MiB in a point of 5 minutes is 1 MiB/s")
    }

    @Test func aChartOfNothingReceivedStillHasItsAxes() {
        let svg = Chart.throughputBy("per worker", kind: "workers", [])
        #expect(svg.contains("data-chart-kind=\"workers\"") && svg.contains(">bytes/s</text>") && svg.contains(">now</text>"))
        #expect(svg.contains("Nothing received in the last hour."))
    }

    @Test func aChartPerOriginNamesItsOriginEvenAlone() {
        let svg = Chart.throughputBy("per origin", kind: "hosts", [(name: "mirror.example:8080", bytes: [0, 60, 120])])
        #expect(svg.contains("<li><i class=\"swatch series-0\"></i>mirror.example:8080</li>"))
    }
}
