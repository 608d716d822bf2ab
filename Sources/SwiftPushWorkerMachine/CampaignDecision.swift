import SwiftPushKeys

/// What a worker does with an entry it has read, by its campaign's control state.
public enum CampaignDecision: Sendable, Equatable {
    /// Claim and send it as usual.
    case send
    /// Move it aside into the campaign's paused stream (before its claim).
    case park
    /// Claim it and give each notification not yet decided REJECTED `Cancelled`, unsent.
    case cancel
    /// Claim it and send its notifications as the campaign's budget allows (its `rate`).
    case throttle

    /// The decision for an entry of `campaign` ("" for none) under `controls`: an entry of no
    /// campaign, or of one without a control, is sent.
    public static func of(campaign: String, _ controls: [String: CampaignControl]) -> CampaignDecision {
        guard !campaign.isEmpty, let c = controls[campaign] else { return .send }
        switch c.state {
        case .active: return c.rate == nil ? .send : .throttle
        case .paused: return .park
        case .cancelled: return .cancel
        }
    }
}
