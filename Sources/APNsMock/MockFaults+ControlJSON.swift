import PushCore

/// `MockFaults` as the control interface reads and writes it (see `MockControl`).
extension MockFaults {
    /// Reads faults from a JSON object with `MockFaults`'s fields in snake_case. Absent keys
    /// keep their defaults; unknown keys and values of the wrong type are errors (a typo
    /// should not pass silently). `now` (monotonic ns) anchors `refuse_connections_ms` and
    /// `expire_tokens_ms`.
    init(controlJSON body: [UInt8], now: UInt64) throws(MockControl.BadRequest) {
        self.init()
        let members: [JSON.Member]
        switch JSON.topLevelMembers(body) {
        case .success(let m): members = m
        case .failure(let f): throw MockControl.BadRequest("the body must be a JSON object: \(f.message) at byte \(f.offset)")
        }
        for m in members {
            let v = Value(key: m.key, raw: Array(body[m.value]))
            switch m.key {
            case "goaway_after_requests": goawayAfterRequests = try v.count()
            case "goaway_reason": goawayReason = try v.string()
            case "refuse_every_nth_stream": refuseEveryNthStream = try v.count()
            case "drop_limit_to_one_after_rejection": dropLimitToOneAfterRejection = try v.bool()
            case "unregistered_tokens": unregisteredTokens = try v.tokenTimestamps()
            case "too_many_requests_tokens": tooManyRequestsTokens = Set(try v.strings())
            case "status_500_every_nth": status500EveryNth = try v.count()
            case "status_503_every_nth": status503EveryNth = try v.count()
            case "status_500_rate": status500Rate = try v.rate()
            case "status_503_rate": status503Rate = try v.rate()
            case "stall_every_nth": stallEveryNth = try v.count()
            case "stall_tokens": stallTokens = Set(try v.strings())
            case "response_delay_ms": responseDelayMillis = try v.count() ?? 0
            case "kill_connection_after_requests": killConnectionAfterRequests = try v.count()
            case "refuse_connections_ms":
                if let ms = try v.count(), ms > 0 { refuseConnectionsUntil = now + UInt64(ms) * 1_000_000 }
            case "expire_tokens_ms":
                if let ms = try v.count(), ms > 0 { expireTokensUntil = now + UInt64(ms) * 1_000_000 }
            case "refuse_client_certificates": refuseClientCertificates = try v.bool()
            case "seed": seed = UInt64(bitPattern: Int64(try v.count() ?? 1))
            default: throw MockControl.BadRequest("unknown fault '\(m.key)'")
            }
        }
    }

    /// The faults as JSON, with `refuse_connections_ms` as the time left from `now`.
    func controlJSON(now: UInt64) -> [UInt8] {
        var o = JSONText.Object()
        o.int("goaway_after_requests", goawayAfterRequests)
        o.string("goaway_reason", goawayReason)
        o.int("refuse_every_nth_stream", refuseEveryNthStream)
        o.bool("drop_limit_to_one_after_rejection", dropLimitToOneAfterRejection)
        var tokens = JSONText.Object()
        for (k, v) in unregisteredTokens.sorted(by: { $0.key < $1.key }) { tokens.raw(k, Array(String(v).utf8)) }
        o.raw("unregistered_tokens", tokens.text)
        o.raw("too_many_requests_tokens", JSONText.array(tooManyRequestsTokens.sorted()))
        o.int("status_500_every_nth", status500EveryNth)
        o.int("status_503_every_nth", status503EveryNth)
        o.double("status_500_rate", status500Rate)
        o.double("status_503_rate", status503Rate)
        o.int("stall_every_nth", stallEveryNth)
        o.raw("stall_tokens", JSONText.array(stallTokens.sorted()))
        o.int("response_delay_ms", responseDelayMillis)
        o.int("kill_connection_after_requests", killConnectionAfterRequests)
        let left = refuseConnectionsUntil.map { $0 > now ? Int(($0 - now) / 1_000_000) : 0 } ?? 0
        o.int("refuse_connections_ms", left)
        o.int("expire_tokens_ms", expireTokensUntil.map { $0 > now ? Int(($0 - now) / 1_000_000) : 0 } ?? 0)
        o.bool("refuse_client_certificates", refuseClientCertificates)
        o.raw("seed", Array(String(seed).utf8))
        return o.text
    }
}

/// One member's raw JSON value, read as the type its fault needs.
private struct Value {
    let key: String
    let raw: [UInt8]

    private func wrong(_ expected: String) -> MockControl.BadRequest {
        MockControl.BadRequest("'\(key)' must be \(expected)")
    }

    private var isNull: Bool { raw.elementsEqual("null".utf8) }

    /// A non-negative integer, or nil for `null`.
    func count() throws(MockControl.BadRequest) -> Int? {
        if isNull { return nil }
        guard let n = raw.withUnsafeBytes({ JSON.decodeInt64($0) }), n >= 0, n <= Int64(Int32.max) else { throw wrong("a non-negative integer or null") }
        return Int(n)
    }

    func bool() throws(MockControl.BadRequest) -> Bool {
        if raw.elementsEqual("true".utf8) { return true }
        if raw.elementsEqual("false".utf8) { return false }
        throw wrong("true or false")
    }

    func string() throws(MockControl.BadRequest) -> String {
        guard let s = raw.withUnsafeBytes({ JSON.decodeString($0) }) else { throw wrong("a string") }
        return s
    }

    /// A probability in 0...1.
    func rate() throws(MockControl.BadRequest) -> Double {
        guard let d = Double(String(decoding: raw, as: UTF8.self)), d >= 0, d <= 1 else { throw wrong("a number from 0 to 1") }
        return d
    }

    /// An array of strings.
    func strings() throws(MockControl.BadRequest) -> [String] {
        guard raw.first == UInt8(ascii: "[") else { throw wrong("an array of strings") }
        var out: [String] = []
        var i = 1
        func skipSpace() { while i < raw.count, [0x20, 0x09, 0x0A, 0x0D].contains(raw[i]) { i += 1 } }
        skipSpace()
        if i < raw.count, raw[i] == UInt8(ascii: "]") { return [] }
        while i < raw.count {
            skipSpace()
            guard i < raw.count, raw[i] == UInt8(ascii: "\"") else { throw wrong("an array of strings") }
            var j = i + 1
            while j < raw.count, raw[j] != UInt8(ascii: "\"") { j += raw[j] == UInt8(ascii: "\\") ? 2 : 1 }
            guard j < raw.count, let s = Array(raw[i...j]).withUnsafeBytes({ JSON.decodeString($0) }) else {
                throw wrong("an array of strings")
            }
            out.append(s)
            i = j + 1
            skipSpace()
            guard i < raw.count else { break }
            if raw[i] == UInt8(ascii: "]") { return out }
            guard raw[i] == UInt8(ascii: ",") else { throw wrong("an array of strings") }
            i += 1
        }
        throw wrong("an array of strings")
    }

    /// An object mapping device tokens to timestamps (ms).
    func tokenTimestamps() throws(MockControl.BadRequest) -> [String: Int64] {
        guard case .success(let members) = JSON.topLevelMembers(raw) else { throw wrong("an object of token: timestamp (ms)") }
        var out: [String: Int64] = [:]
        for m in members {
            guard let t = Array(raw[m.value]).withUnsafeBytes({ JSON.decodeInt64($0) }) else {
                throw wrong("an object of token: timestamp (ms)")
            }
            out[m.key] = t
        }
        return out
    }
}
