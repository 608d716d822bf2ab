/// What an operator set for one campaign (`swiftpush campaign ...`), as the workers read it
/// from the shard's `campaign:{s}:<name>` hash (docs/worker.md, "Steering a campaign").
public enum CampaignState: String, Sendable, CaseIterable {
    /// Sent as usual (also what a campaign without a control hash is).
    case active
    /// Its entries are moved aside (`paused:{s}:<name>`) as they are read, until `resume`.
    case paused
    /// Its entries read from now on are not sent: each notification gets REJECTED `Cancelled`.
    /// Final: a cancelled campaign is not resumed.
    case cancelled
}

/// One campaign's control state: its `state` and, when throttled, its `rate`.
public struct CampaignControl: Sendable, Equatable {
    /// Active, paused or cancelled.
    public var state: CampaignState
    /// The most notifications per second the fleet sends of it; nil: no limit.
    public var rate: Double?
    /// When an operator last changed it (UNIX ms; 0 when unknown).
    public var updatedMillis: Int64

    /// A control state.
    public init(state: CampaignState = .active, rate: Double? = nil, updatedMillis: Int64 = 0) {
        self.state = state
        self.rate = rate
        self.updatedMillis = updatedMillis
    }

    /// The state of a control hash's fields (`HGETALL campaign:{s}:<name>`); an unknown
    /// `state` reads as active (a later version may know more states: sending is what an
    /// older worker did), a `rate` that is not a positive number as none.
    public init(fields: [(String, String)]) {
        var c = CampaignControl()
        for (name, value) in fields {
            switch name {
            case "state": c.state = CampaignState(rawValue: value) ?? .active
            case "rate": c.rate = Double(value).flatMap { $0 > 0 && $0.isFinite ? $0 : nil }
            case "updated_ms": c.updatedMillis = Int64(value) ?? 0
            default: break
            }
        }
        self = c
    }

    /// A rate as short text (`200`, `12.5`), as the control hash holds it.
    public static func text(_ rate: Double) -> String {
        rate == rate.rounded() && rate < 1e15 ? String(Int64(rate)) : String(rate)
    }
}
