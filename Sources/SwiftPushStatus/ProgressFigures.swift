/// How far along a scope is: what has an outcome, what is left, how fast it goes and how long
/// it will take at that rate. Any figure may be unknown (nil), never guessed.
public struct ProgressFigures: Equatable, Sendable {
    /// What `done` and `remaining` count (and `rate`: `unit` per second).
    public var unit: CountUnit
    /// With an outcome so far.
    public var done: Int?
    /// Still to settle.
    public var remaining: Int?
    /// `done`'s growth per second over the reads of the last seconds (`RateTracker.windowMillis`);
    /// nil when those reads do not give one (the first read, the first after a pause).
    public var rate: Double?

    /// Figures given one by one.
    public init(unit: CountUnit, done: Int?, remaining: Int?, rate: Double?) {
        self.unit = unit
        self.done = done
        self.remaining = remaining
        self.rate = rate
    }

    /// done + remaining, when both are known.
    public var total: Int? { done.flatMap { d in remaining.map { d + $0 } } }

    /// done / total in [0, 1]; nil when unknown or nothing was ever there.
    public var fraction: Double? {
        guard let done, let total, total > 0 else { return nil }
        return Double(done) / Double(total)
    }

    /// Seconds until `remaining` is done at `rate`: 0 when work was done and nothing remains;
    /// nil when unknown, when nothing was ever there (an idle fleet is not "done"), or when
    /// nothing moves (a stalled queue has no time left to show).
    public var etaSeconds: Double? {
        guard let remaining else { return nil }
        if remaining == 0 { return (done ?? 0) > 0 ? 0 : nil }
        guard let rate, rate > 0 else { return nil }
        return Double(remaining) / rate
    }

    /// The figures of several shards added up: each sum known only if every part knows it,
    /// and none when they count different units.
    public static func sum(_ parts: [ProgressFigures]) -> ProgressFigures {
        guard let unit = parts.first?.unit else { return ProgressFigures(unit: .notifications, done: 0, remaining: 0, rate: 0) }
        guard parts.allSatisfy({ $0.unit == unit }) else { return ProgressFigures(unit: .mixed, done: nil, remaining: nil, rate: nil) }
        func add(_ values: [Int?]) -> Int? { values.reduce(Optional(0)) { a, b in a.flatMap { x in b.map { x + $0 } } } }
        let rates = parts.map(\.rate)
        let rate: Double? = rates.contains(where: { $0 == nil }) ? nil : rates.reduce(0) { $0 + $1! }
        return ProgressFigures(unit: unit, done: add(parts.map(\.done)), remaining: add(parts.map(\.remaining)), rate: rate)
    }
}
