/// JSON: every figure, unknown ones as null; the rate to a tenth, the time left in seconds.
extension ProgressFigures: Encodable {
    private enum Keys: String, CodingKey { case unit, done, remaining, total, fraction, rate, etaSeconds = "eta_s" }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Keys.self)
        try c.encode(unit, forKey: .unit)
        try c.encode(done, forKey: .done)
        try c.encode(remaining, forKey: .remaining)
        try c.encode(total, forKey: .total)
        try c.encode(fraction.map { ($0 * 10_000).rounded() / 10_000 }, forKey: .fraction)
        try c.encode(rate.map { ($0 * 10).rounded() / 10 }, forKey: .rate)
        try c.encode(etaSeconds.map { $0.rounded(.up) }, forKey: .etaSeconds)
    }
}
