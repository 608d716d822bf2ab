/// One point of the rate chart: the rate at a read. JSON: `[time_ms, rate]`.
public struct RatePoint: Encodable, Equatable, Sendable {
    /// A point given field by field.
    public init(timeMillis: Int, rate: Double) {
        self.timeMillis = timeMillis
        self.rate = rate
    }

    /// Redis's clock at the read, UNIX ms.
    public var timeMillis: Int
    /// Outcomes per second then (in its history's unit).
    public var rate: Double

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.unkeyedContainer()
        try c.encode(timeMillis)
        try c.encode((rate * 10).rounded() / 10)
    }
}
