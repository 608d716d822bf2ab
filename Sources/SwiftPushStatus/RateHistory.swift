/// The rate chart's data: the focus's rate at each read, in runs of reads that each measured
/// one. A read without a rate (the first, the first after a pause: `RateTracker`) or a time
/// between two reads longer than the rate's window ends a run, so the page draws a gap where
/// nobody measured, never a line across it (issue 35).
/// JSON: `{"unit": "notifications_per_s", "segments": [[[time_ms, rate], ...], ...]}`.
public struct RateHistory: Encodable, Equatable, Sendable {
    /// What the rates count per second.
    public var unit: CountUnit
    /// The runs, oldest first; each point's rate was measured at its read.
    public var segments: [[RatePoint]]

    /// A history given field by field.
    public init(unit: CountUnit, segments: [[RatePoint]]) {
        self.unit = unit
        self.segments = segments
    }

    private enum Keys: String, CodingKey { case unit, segments }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Keys.self)
        try c.encode(unit.rawValue + "_per_s", forKey: .unit)
        try c.encode(segments, forKey: .segments)
    }

    /// The history of the series `keys` picks out of `ticks`: a point where every series picked
    /// that was sampled had a rate (their sum), a break where one had none, where none was
    /// sampled, or where the reads were more than `gapMillis` apart.
    static func of(_ ticks: [StatusSnapshot.Tick], unit: CountUnit, gapMillis: Int, keys: (RateKey) -> Bool) -> RateHistory {
        var segments: [[RatePoint]] = []
        var run: [RatePoint] = []
        var previous: Int?
        for tick in ticks {
            let sampled = tick.sampled.filter(keys)
            let rates = sampled.compactMap { tick.rates[$0] }
            if let p = previous, tick.timeMillis - p > gapMillis, !run.isEmpty { segments.append(run); run = [] }
            previous = tick.timeMillis
            if sampled.isEmpty || rates.count < sampled.count {
                if !run.isEmpty { segments.append(run); run = [] }
                continue
            }
            run.append(RatePoint(timeMillis: tick.timeMillis, rate: rates.reduce(0, +)))
        }
        if !run.isEmpty { segments.append(run) }
        return RateHistory(unit: unit, segments: segments)
    }
}
