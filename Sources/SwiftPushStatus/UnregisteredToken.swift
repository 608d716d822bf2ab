import SwiftPushRedis

/// One of the latest 410s of a shard (`unregistered:{s}`), as the status shows it: the token
/// shortened, never in full; the notification id left out (a producer's id may say who it was for).
public struct UnregisteredToken: Encodable, Equatable, Sendable {
    /// The shard whose stream holds it.
    public var shard: String
    /// The token, shortened (`TokenText`).
    public var token: String
    /// The app it was sent through.
    public var app: String
    /// `Unregistered` or `ExpiredToken`.
    public var reason: String
    /// When APNs learned the token was invalid (UNIX ms; the entry's time when APNs did not say).
    public var timeMillis: Int

    enum CodingKeys: String, CodingKey { case shard, token, app, reason, timeMillis = "time_ms" }

    /// The 410s of shard `shard`'s `XREVRANGE unregistered:{s} + - COUNT n` reply, newest first.
    static func list(_ reply: RedisReply, shard: String) -> [UnregisteredToken] {
        reply.elements.compactMap { entry in
            let parts = entry.elements
            guard parts.count == 2, let id = parts[0].text else { return nil }
            let f = FieldList(parts[1])
            let entryMillis = Int(id.prefix { $0 != "-" }) ?? 0
            let stamped = f.integer("timestamp_ms") ?? 0
            return UnregisteredToken(shard: shard, token: TokenText.shortened(f.text("token") ?? ""), app: f.text("app") ?? "",
                                     reason: f.text("reason") ?? "", timeMillis: stamped > 0 ? stamped : entryMillis)
        }
    }

    /// A 410 given field by field (the token already shortened).
    public init(shard: String, token: String, app: String, reason: String, timeMillis: Int) {
        self.shard = shard
        self.token = token
        self.app = app
        self.reason = reason
        self.timeMillis = timeMillis
    }
}
