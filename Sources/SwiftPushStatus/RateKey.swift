/// One rate series: a scope of a shard, in a unit (a shard whose workers start counting begins
/// a new series rather than showing a jump as a rate).
public struct RateKey: Hashable, Sendable {
    /// The shard.
    public var shard: String
    /// The scope inside it.
    public var scope: StatusScope
    /// What its `done` counts.
    public var unit: CountUnit

    /// A key given field by field.
    public init(shard: String, scope: StatusScope, unit: CountUnit) {
        self.shard = shard
        self.scope = scope
        self.unit = unit
    }
}
