import PushCore

/// An `apns-id`: the UUID that names a notification to APNs (a broadcast's
/// `apns-request-id`). Give one to a notification to choose it (the same on every resend of
/// yours: APNs does not deduplicate, but your records can); without one the library makes a
/// random one. Every result carries the notification's.
///
/// Build one from its bits (`APNsID(high:low:)`), its text (`APNsID("...")`, nil for anything
/// but a canonical UUID) or at random (`APNsID.random()`); `description` is its lowercase text.
/// The package's one UUID value (`UUID128`), which the worker's machine holds as well without
/// reaching this module.
public typealias APNsID = UUID128
