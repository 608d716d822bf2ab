#if canImport(Glibc)
import Glibc
#endif

/// `apns-expiration`: until when APNs keeps trying to deliver a notification to a device that
/// is offline. Unset, APNs decides (device notifications); a broadcast must set one.
public struct PushExpiration: Hashable, Sendable, CustomStringConvertible {
    /// UNIX seconds; 0 means "try once, don't store".
    public let unixSeconds: Int64

    /// An expiration at `unixSeconds` (0: try once; negative values are refused when sent,
    /// `.badExpiration`).
    public init(unixSeconds: Int64) { self.unixSeconds = unixSeconds }

    /// Try once and don't store (0).
    public static let immediately = PushExpiration(unixSeconds: 0)

    /// `duration` from now, by the system's wall clock (whole seconds, rounded up).
    public static func after(_ duration: Duration) -> PushExpiration {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let (seconds, attoseconds) = duration.components
        return PushExpiration(unixSeconds: Int64(now.tv_sec) + seconds + (attoseconds > 0 ? 1 : 0))
    }

    /// The UNIX seconds.
    public var description: String { String(unixSeconds) }
}
