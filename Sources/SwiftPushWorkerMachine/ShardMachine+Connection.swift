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
        out.append(.log(Self.unreachable(e, "cannot reach Redis; retrying", ["retry_ms": String(delay / 1_000_000)])))
    }

    /// The log line of a failed connect or a lost connection: a Redis answering `LOADING` is
    /// one that restarted and is reading its data set back (its AOF or RDB), which is expected
    /// after a restart and ends by itself: a warning that says so, not an error (issue 31).
    static func unreachable(_ e: QueueError, _ message: String, _ fields: [String: String] = [:]) -> WorkerLogLine {
        var fields = fields
        fields["error"] = e.description
        if e.description.contains("LOADING") {
            return .init(.warning, "Redis is loading its data set (it restarted); retrying once it is loaded", fields)
        }
        return .init(.error, message, fields)
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
        out.append(.log(Self.unreachable(e, "lost Redis")))
        for (_, purpose) in requests {
            switch purpose {
            case .read(_, let reserved, _, _), .claim(_, _, let reserved), .park(_, _, _, let reserved): reservedNotes -= reserved
            case .readFast(_, let reserved, _, _): fastReadEnded(reserved: reserved)
            case .countDelivery(let app, let serials):
                putBackSuspects(app: app, serials)
            case .markWritten(let add, let drop):
                marksNotSent(add: add, drop: drop, t)
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
        end()
        out.append(.fatal(message))
    }

    /// SIGTERM/SIGINT: no more reads; what is held (read, or taken back and not sent yet: those
    /// go at once, `sendSuspects`) gets `drain_ms` to finish, and a take-back under way goes on.
    mutating func beginStop(_ t: WorkerTime, _ out: inout [WorkerAction]) {
        guard lifecycle == .running else { return }
        lifecycle = .stopping(.init(drainDeadlineNanos: t.nanos + UInt64(settings.drainMillis) * 1_000_000))
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
    /// is handed back (`handBackAndFinish`).
    mutating func stopIfDone(_ t: WorkerTime, _ out: inout [WorkerAction]) {
        if t.nanos >= drainDeadlineNanos {
            for serial in suspects.takeAllWaiting() { if let h = held[serial] { leave(h) } }
        }
        // Entries with nothing open that cannot be settled whole (some of it left): what is
        // decided of them is settled as a checkpoint, so that the next holder resends only the rest.
        for h in held.values where h.open == 0 && h.inFlight == 0 && !h.finalQueued && h.hasUnqueued {
            queueSettlement(h, final: false, t)
        }
        let readsPending = has {
            switch $0 {
            case .read, .readFast, .claim, .ownPending, .takeOwn, .reclaim, .countDelivery, .handBack, .park: return true
            default: return false
            }
        }
        let settled = unsettled.isEmpty && settling == 0
        if t.nanos >= drainDeadlineNanos {
            if !clientsClosed {
                updateStop { $0.clientsClosed = true }
                out.append(.closeClients)
                return
            }
            if link != .up || (inFlightCount == 0 && (settled || settleFailures > 0)) { handBackAndFinish(t, &out) }
            return
        }
        // A take-back still to do, unless Redis is lost (a stop during an outage ends at once);
        // while connecting (a SIGTERM at start) it waits for the connection.
        let passLeft = ownPass != nil && link != .down
        if inFlightCount == 0 && waitingResend.isEmpty && !readsPending && settled && !passLeft && suspects.waitingCount == 0 {
            handBackAndFinish(t, &out)
        }
    }

    /// Before the end, whatever is still pending with this consumer (held and not finished,
    /// taken and never taken in, not listed yet) is handed back with its idle time set to years
    /// (`QueueRequest.handBack`): another worker's next reclaim takes it at once instead of
    /// after `min_idle_ms` (issue 31: a scale-down or a deploy right after a crash stranded up
    /// to 2,988 entries for 183 s). One round trip, asked for once; without Redis, or with no
    /// reply `handBackWaitNanos` past the drain time, it ends anyway.
    mutating func handBackAndFinish(_ t: WorkerTime, _ out: inout [WorkerAction]) {
        switch handBack {
        case .done:
            finish(&out)
        case .asked:
            if link != .up || t.nanos >= drainDeadlineNanos + Self.handBackWaitNanos { finish(&out) }
        case .notYet:
            guard link == .up else { return finish(&out) }
            updateStop { $0.handBack = .asked }
            request(.handBack(idleMillis: Self.handBackIdleMillis), .handBack, &out)
        }
    }

    /// The hand-back answered (`n` entries), or failed (nil).
    mutating func handedBack(_ n: Int?, _ out: inout [WorkerAction]) {
        updateStop { $0.handBack = .done }
        guard let n, n > 0 else { return }
        counters.handedBack += n
        out.append(.log(.init(.warning, "handed back entries this stop could not finish: any worker's next reclaim takes them at once",
                              ["handed_back": String(n)])))
    }

    /// The end: what is still held stays pending.
    mutating func finish(_ out: inout [WorkerAction]) {
        guard !finished else { return }
        end()
        counters.leftPending += held.count
        out.append(.stopped(leftPending: counters.leftPending))
    }
}
