/// The queue's connection coming and going, and the stop: what a lost connection takes with
/// it, the back-off before the next attempt, a failure that retrying cannot fix, draining.
extension ShardMachine {
    mutating func connected(_ t: WorkerTime, _ out: inout [WorkerAction]) {
        if backoff.failures > 0 {
            counters.redisReconnects += 1
            out.append(.log(.init(.info, "connected to Redis again")))
        }
        backoff.succeeded()
        link = .up
        settleRetryNanos = 0
        nextMaintenanceNanos = 0
    }

    mutating func connectFailed(_ e: QueueError, _ t: WorkerTime, _ out: inout [WorkerAction]) {
        link = .down
        if e.permanent {
            fail(e.description, &out)
            return
        }
        let delay = backoff.failed(now: t.nanos, attemptStartedNanos: t.nanos, unit: random.unit()) ?? backoff.firstDelayNanos
        connectAtNanos = t.nanos + delay
        out.append(.log(.init(.error, "cannot reach Redis; retrying", ["error": e.description, "retry_ms": String(delay / 1_000_000)])))
    }

    /// Every request in flight is lost with the connection: a settle goes again once connected,
    /// reads and claims are found again by a re-read of our own pending entries (what they
    /// delivered is pending with us), re-delivered entries waiting for their count go back to
    /// waiting.
    mutating func connectionLost(_ e: QueueError, _ t: WorkerTime, _ out: inout [WorkerAction]) {
        guard link != .down else { return }
        if e.permanent {
            fail(e.description, &out)
            return
        }
        out.append(.log(.init(.error, "lost Redis", ["error": e.description])))
        for (_, purpose) in requests {
            switch purpose {
            case .read(_, let reserved), .claim(_, _, let reserved): reservedNotes -= reserved
            case .countDelivery(let app, let serials):
                suspects.putBack(app: app, tags: serials) { self.held[$0]?.deliveries ?? 0 }
            default: break
            }
        }
        requests.removeAll()
        settling = 0
        link = .down
        let delay = backoff.failed(now: t.nanos, attemptStartedNanos: t.nanos, unit: random.unit()) ?? backoff.firstDelayNanos
        connectAtNanos = t.nanos + delay
        // A pass at start cut short by the loss goes on as one (what it finds is re-delivered).
        ownPass = OwnPendingPass(suspects: ownPass?.suspects ?? false)
    }

    /// A failure that retrying cannot fix: the machine ends now, its entries left pending.
    mutating func fail(_ message: String, _ out: inout [WorkerAction]) {
        counters.leftPending += held.count
        finished = true
        out.append(.fatal(message))
    }

    /// SIGTERM/SIGINT: no more reads; what is in flight gets `drain_ms` to finish.
    mutating func beginStop(_ t: WorkerTime, _ out: inout [WorkerAction]) {
        guard !stopping else { return }
        stopping = true
        drainDeadlineNanos = t.nanos + UInt64(settings.drainMillis) * 1_000_000
        // Re-delivered entries not sent yet stay pending, for the next life or a reclaim.
        for serial in suspects.takeAllWaiting() {
            guard let h = held[serial] else { continue }
            leave(h)
        }
        out.append(.log(.init(.info, "stopping: no more reads, draining", ["in_flight": String(inFlightCount)])))
    }

    /// Lets go of an entry without settling it whole: it stays pending in the queue (what was
    /// decided of it is settled as a checkpoint first, if the queue can still be reached).
    mutating func leave(_ h: HeldEntry) {
        for i in h.tracks.indices where h.tracks[i].phase == .waiting || h.tracks[i].phase == .resend {
            h.tracks[i].phase = .left
            h.open -= 1
        }
    }

    /// Ends the stop once everything held is settled (or left), or when the drain time is over:
    /// past it, the clients are closed (what is in flight comes back cancelled and stays
    /// pending), what is decided is settled if Redis can be reached (one try), and the rest
    /// stays pending.
    mutating func stopIfDone(_ t: WorkerTime, _ out: inout [WorkerAction]) {
        // Entries with nothing open that cannot be settled whole (some of it left): what is
        // decided of them is settled as a checkpoint, so that the next holder resends only the rest.
        for h in held.values where h.open == 0 && h.inFlight == 0 && !h.finalQueued && h.hasUnqueued {
            queueSettlement(h, final: false, t)
        }
        let readsPending = has {
            switch $0 {
            case .read, .claim, .ownPending, .takeOwn, .reclaim, .countDelivery: return true
            default: return false
            }
        }
        let settled = unsettled.isEmpty && settling == 0
        if t.nanos >= drainDeadlineNanos {
            if !clientsClosed {
                clientsClosed = true
                out.append(.closeClients)
                return
            }
            if link != .up || (inFlightCount == 0 && (settled || settleFailures > 0)) { finish(&out) }
            return
        }
        if inFlightCount == 0 && waitingResend.isEmpty && !readsPending && settled { finish(&out) }
    }

    /// The end: what is still held stays pending.
    mutating func finish(_ out: inout [WorkerAction]) {
        guard !finished else { return }
        finished = true
        counters.leftPending += held.count
        out.append(.stopped(leftPending: counters.leftPending))
    }
}
