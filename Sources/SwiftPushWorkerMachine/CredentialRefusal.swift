/// APNs's refusal of an app's credentials for a topic (a 403 of the reasons table's `refused`
/// class: InvalidProviderToken, BadCertificate, ...), as the worker remembers it until APNs
/// answers that app and topic otherwise. While it stands, one notification at a time (the
/// probe) goes to APNs and the others are rejected unsent: a refused token connection keeps
/// APNs's one stream, and its notifications would otherwise fill the in-flight budget that
/// every app shares (issue 23: the healthy app ran at the refused app's pace).
struct CredentialRefusal {
    /// APNs's status and reason.
    let status: Int32
    let reason: String
    /// The notification sent to find out whether the refusal still stands (by tag); another
    /// may go once it is no longer held.
    var probe: UInt64?
}
