/// The I/O thread's state as the stats show it (copied under the lock at each publish).
package struct PublishedState {
    /// Nothing yet.
    package init() {}
    package var queued = 0
    package var inFlight = 0
    package var connectionsOpen = 0
    package var connectionsOpening = 0
    package var lastGoawayReason = ""
    /// (state, stream limit, in flight) per connection: pool first, then draining ones.
    package var connections: [(Int32, Int32, Int32)] = []
}
