import PushCore

/// The control interface: lets tests in other processes (C, Python, Go, shell) script a
/// running mock. Plain HTTP/1.1 on 127.0.0.1 (`MockServer.Configuration.controlPort`, or
/// `swiftpush mock --control-port-file F`), JSON bodies:
///
/// | request | answer |
/// |---|---|
/// | `GET /stats` | the counters (`MockStats`), snake_case keys |
/// | `GET /record` | the records (`MockRecord`): `[{"connection":1,"stream":1,"apns_id":"…","device_token":"…","status":200,"reason":"","received_us":1700000000123456}, …]` (`received_us`: `MockRecord.receivedMicros`) |
/// | `POST /record/reset` | forgets the records: `{"ok":true}` |
/// | `GET /faults` | the faults in force (same keys as `POST /faults`) |
/// | `POST /faults` | replaces the faults with the body's: `{"ok":true}`, or 400 `{"ok":false,"error":"…"}` |
///
/// `POST /faults` keys are `MockFaults`'s fields in snake_case; absent keys take their
/// defaults (the faults are replaced, not merged): `goaway_after_requests`, `goaway_reason`,
/// `refuse_every_nth_stream`, `drop_limit_to_one_after_rejection`, `unregistered_tokens`
/// (`{"token": ms}`), `too_many_requests_tokens` (`[…]`), `status_500_every_nth`,
/// `status_503_every_nth`, `status_500_rate`, `status_503_rate`, `stall_every_nth`,
/// `stall_tokens` (`[…]`), `response_delay_ms`, `kill_connection_after_requests`,
/// `refuse_connections_ms` (from now), `expire_tokens_ms` (from now),
/// `refuse_client_certificates`, `seed`. Counts may be `null` (off).
enum MockControl {
    /// Answers one request: the HTTP status and the JSON body.
    static func handle(method: String, path: String, body: [UInt8], core: MockServerCore) -> (Int, [UInt8]) {
        switch (method, path) {
        case ("GET", "/stats"):
            return (200, core.ledger.snapshot().controlJSON)
        case ("GET", "/record"):
            return (200, recordJSON(core.ledger.records()))
        case ("POST", "/record/reset"):
            core.ledger.resetRecord()
            return (200, ok)
        case ("GET", "/faults"):
            return (200, core.mailbox.current().0.controlJSON(now: core.clock.currentMonotonicNanos()))
        case ("POST", "/faults"):
            do throws(BadRequest) {
                let faults = try MockFaults(controlJSON: body, now: core.clock.currentMonotonicNanos())
                core.mailbox.set(faults)
                return (200, ok)
            } catch {
                return (400, Self.error(error.message))
            }
        case (_, "/stats"), (_, "/record"), (_, "/record/reset"), (_, "/faults"):
            return (405, Self.error("method \(method) not allowed on \(path)"))
        default:
            return (404, Self.error("no such endpoint: \(path) (try /stats, /record, /record/reset, /faults)"))
        }
    }

    /// A request the control interface cannot carry out, with the reason.
    struct BadRequest: Error {
        let message: String
        init(_ message: String) { self.message = message }
    }

    static let ok = Array(#"{"ok":true}"#.utf8)

    static func error(_ message: String) -> [UInt8] {
        var o = JSONText.Object()
        o.bool("ok", false)
        o.string("error", message)
        return o.text
    }

    static func recordJSON(_ records: [MockRecord]) -> [UInt8] {
        var out: [UInt8] = [UInt8(ascii: "[")]
        out.reserveCapacity(records.count * 160 + 2)
        for (i, r) in records.enumerated() {
            if i > 0 { out += [UInt8(ascii: ","), 10] }
            var o = JSONText.Object()
            o.int("connection", r.connection)
            o.int("stream", Int(r.stream))
            o.string("apns_id", r.apnsId)
            o.string("device_token", r.deviceToken)
            o.int("status", r.status)
            o.string("reason", r.reason)
            o.int("received_us", Int(r.receivedMicros))
            out += o.text
        }
        out.append(UInt8(ascii: "]"))
        return out
    }
}

extension MockStats {
    /// The counters as the control interface shows them.
    var controlJSON: [UInt8] {
        var o = JSONText.Object()
        o.int("requests", requests)
        o.int("accepted", accepted)
        o.int("rejected", rejected)
        var reasons = JSONText.Object()
        for (k, v) in rejectedByReason.sorted(by: { $0.key < $1.key }) { reasons.int(k, v) }
        o.raw("rejected_by_reason", reasons.text)
        o.int("stalled", stalledRequests)
        o.int("connections", connections)
        o.int("open_connections", openConnections)
        o.int("refused_connections", refusedConnections)
        o.int("refused_certificates", refusedCertificates)
        o.int("pings_received", pingsReceived)
        o.int("killed_connections", killedConnections)
        o.int("unanswered_streams", unansweredStreams)
        o.int("refused_streams", refusedStreams)
        o.int("goaways", goaways)
        o.int("stream_limit_violations", streamLimitViolations)
        o.int("peak_concurrent_streams", peakConcurrentStreams)
        o.int("records", records)
        o.int("records_dropped", recordsDropped)
        return o.text
    }
}
