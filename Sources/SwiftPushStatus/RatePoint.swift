/// One point of the rate chart: the rate at a read. JSON: `[time_ms, rate]`.
public struct RatePoint: Encodable, Equatable, Sendable {
    /// Redis's clock at the read, UNIX ms.
    public var timeMillis: Int
    /// Outcomes per second then.
    public var rate: Double

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.unkeyedContainer()
        try c.encode(timeMillis)
        try c.encode((rate * 10).rounded() / 10)
    }
}
