import Foundation
import StoreCalendar

extension RefundReport {
    /// What one bar of the chart covers: a day up to 60 days, a week (from Monday) up to a year, a month up to ten
    /// years, a year beyond; so a long range keeps bars wide enough to read.
    enum ChartPeriod: String, Equatable {
        case day, week, month, year

        /// The period for a range of `days` days.
        static func forRange(days: Int) -> ChartPeriod {
            switch days {
            case ...60: .day
            case ...366: .week
            case ...3660: .month
            default: .year
            }
        }
    }

    /// One bar: its label under the axis, its tooltip, and its refunds per platform.
    struct ChartBar: Equatable {
        var label: String
        var title: String
        var counts: [String: Int] = [:]
    }

    /// Average width of a digit or dash at the labels' font size (10 px sans-serif), rounded up, in pixels.
    static let labelCharacterWidth = 7
    /// Space kept between two labels, in pixels.
    static let labelGap = 6

    /// The range split into bars of ``ChartPeriod``, each holding the refunds of its days per platform.
    func chartBars() -> (ChartPeriod, [ChartBar]) {
        chartBars(daily.map { ($0.day, $0.platform, $0.refunds) })
    }

    /// The range split into bars of ``ChartPeriod``, each holding the sum of its days' `points` per segment.
    func chartBars(_ points: [(day: String, segment: String, value: Int)]) -> (ChartPeriod, [ChartBar]) {
        Self.chartBars(from: options.from, to: options.to, points)
    }

    /// The days `from` ... `to` (`YYYY-MM-DD`, inclusive) split into bars of ``ChartPeriod``, each holding the sum of
    /// its days' `points` per segment.
    static func chartBars(
        from: String, to: String, _ points: [(day: String, segment: String, value: Int)]
    ) -> (ChartPeriod, [ChartBar]) {
        guard let first = CivilDate(iso: from), let last = CivilDate(iso: to) else { return (.day, []) }
        let period = ChartPeriod.forRange(days: last.number - first.number + 1)
        func index(_ day: CivilDate) -> Int {
            switch period {
            case .day: day.number - first.number
            case .week: (day.monday - first.monday) / 7
            case .month: (day.year - first.year) * 12 + day.month - first.month
            case .year: day.year - first.year
            }
        }
        var bars: [ChartBar] = []
        var day = first
        while day.number <= last.number {
            let end: CivilDate
            switch period {
            case .day: end = day
            case .week: end = CivilDate(number: min(last.number, day.monday + 6))
            case .month: end = CivilDate(number: min(last.number, day.number + day.daysLeftInMonth))
            case .year: end = CivilDate(number: min(last.number, day.number + day.daysLeftInYear))
            }
            let label =
                switch period {
                case .day, .week: String(day.text.suffix(5))
                case .month: String(day.text.prefix(7))
                case .year: String(day.text.prefix(4))
                }
            bars.append(ChartBar(label: label, title: end == day ? day.text : "\(day.text) to \(end.text)"))
            day = CivilDate(number: end.number + 1)
        }
        for point in points {
            guard let pointDay = CivilDate(iso: point.day), bars.indices.contains(index(pointDay)) else { continue }
            bars[index(pointDay)].counts[point.segment, default: 0] += point.value
        }
        return (period, bars)
    }

    /// A store's colour; Apple's test environments (a part of their own with `--environment all`) in lighter blues.
    static let platformColours = [
        "apple": "#4a78c2", "google": "#3aa757", "apple sandbox": "#9db7e3", "apple xcode": "#6f93cf",
        "apple localtesting": "#c5d5ef",
    ]

    /// What a chart's values are and how big it is drawn: `unit` values make one unit of the axis (1 for counts;
    /// 10^minor-unit for money counted in minor units), `text` writes a value for a tooltip, `width` and `height`
    /// are the plot's pixels (so that the count chart and two money charts sit side by side at 1280 pixels).
    struct ChartScale {
        var unit = 1
        var width = 400
        var height = 240
        var text: (Int) -> String = { String($0) }
    }

    /// The step between gridlines: the smallest of 1, 2, 3, 4, 5, 6, 8, 12, 15, 25 x a power of ten (a whole
    /// number) at or above `least`, so that the axis reads in round figures.
    static func roundStep(atLeast least: Int) -> Int {
        var power = 1
        while true {
            for multiple in [1, 2, 3, 4, 5, 6, 8, 12, 15, 25] where multiple * power >= least {
                return multiple * power
            }
            power *= 10
        }
    }

    /// Stacked bars of refunds: one per period of the range, a segment per platform; every label readable.
    func chartSVG() -> String {
        let (period, bars) = chartBars()
        return Self.barChartSVG(
            caption: "Refunds per \(Self.periodName(period)) per platform", bars: bars,
            segments: Array(Set(daily.map(\.platform))).sorted(), scale: ChartScale())
    }

    /// "day", "week (from Monday)", ...
    static func periodName(_ period: ChartPeriod) -> String {
        period == .week ? "week (from Monday)" : period.rawValue
    }

    /// Stacked bars, a segment per `segments` entry, on a scale of four whole gridlines (the axis ends at the
    /// fourth, at or above the highest bar, so each gridline's label is its true height); a label every few bars so
    /// that no two overlap.
    static func barChartSVG(
        caption: String, bars: [ChartBar], segments: [String], colours: [String: String] = platformColours,
        scale: ChartScale
    ) -> String {
        let highest = max(1, bars.map { $0.counts.values.reduce(0, +) }.max() ?? 1)
        let tick = Self.roundStep(atLeast: ((highest + scale.unit - 1) / scale.unit + 3) / 4) * scale.unit
        let maximum = tick * 4
        let barWidth = max(4, min(40, scale.width / max(1, bars.count)))
        let chartHeight = scale.height
        let left = max(50, String(maximum / scale.unit).count * Self.labelCharacterWidth + 14)
        let width = left + barWidth * bars.count + 20
        // A label every `step` bars, so that two labels are at least a label's width (and a gap) apart.
        let labelWidth = (bars.map(\.label.count).max() ?? 0) * Self.labelCharacterWidth + Self.labelGap
        let step = max(1, (labelWidth + barWidth - 1) / barWidth)
        var svg = """
            <figure><figcaption>\(Self.escape(caption))</figcaption>
            <svg xmlns="http://www.w3.org/2000/svg" width="\(width)" height="\(chartHeight + 60)" role="img" \
            aria-label="\(Self.escape(caption))">

            """
        for level in 0...4 {
            let y = chartHeight - chartHeight * level / 4 + 10
            svg += "<line x1=\"\(left)\" x2=\"\(width - 10)\" y1=\"\(y)\" y2=\"\(y)\" stroke=\"#eee\"/>"
            svg += "<text x=\"\(left - 6)\" y=\"\(y + 4)\" font-size=\"11\" text-anchor=\"end\">"
            svg += "\(tick * level / scale.unit)</text>\n"
        }
        for (index, bar) in bars.enumerated() {
            var top = chartHeight + 10
            let x = left + index * barWidth
            for segment in segments {
                let value = bar.counts[segment] ?? 0
                guard value > 0 else { continue }
                let height = max(1, Int(Int64(chartHeight) * Int64(value) / Int64(maximum)))
                top -= height
                let colour = colours[segment] ?? "#999"
                svg += "<rect x=\"\(x + 1)\" y=\"\(top)\" width=\"\(barWidth - 2)\" height=\"\(height)\" "
                svg += "fill=\"\(colour)\"><title>\(Self.escape(bar.title)) \(Self.escape(segment)): "
                svg += "\(Self.escape(scale.text(value)))</title></rect>\n"
            }
            if index % step == 0 {
                svg += "<text x=\"\(x + barWidth / 2)\" y=\"\(chartHeight + 26)\" font-size=\"10\" "
                svg += "text-anchor=\"middle\">\(Self.escape(bar.label))</text>\n"
            }
        }
        svg += "</svg>\n<div class=\"legend\">"
        for segment in segments {
            svg += "<span style=\"background:\(colours[segment] ?? "#999")\"></span>"
            svg += Self.escape(segment)
        }
        return svg + "</div></figure>\n"
    }
}

extension CivilDate {
    /// Days since 1970-01-01: the chart's bar arithmetic.
    var number: Int { daysSinceEpoch }

    /// The day `number` days after 1970-01-01.
    init(number: Int) { self.init(daysSinceEpoch: number) }

    /// `YYYY-MM-DD`.
    var text: String { description }

    /// The day number of this day's week's Monday (1970-01-01 was a Thursday).
    var monday: Int { number - ((number % 7 + 7 + 3) % 7) }

    /// Days after this one in its month.
    var daysLeftInMonth: Int { CivilDate.days(inMonth: month, of: year) - day }

    /// Days after this one in its year.
    var daysLeftInYear: Int { CivilDate.daysSinceEpoch(year: year, month: 12, day: 31) - number }
}
