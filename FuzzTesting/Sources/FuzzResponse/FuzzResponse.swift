import FuzzSupport
import PushCore

// APNs error bodies (`{"reason":"...","timestamp":...}`) and GOAWAY debug data, as a server
// (or anything between it and us) might send them. Properties:
// - parseErrorBody gives a result exactly when the body is a JSON object whose last `reason`
//   member is a string; its text is that string decoded, its reason the table's entry for the
//   text as a server's (spelled exactly as the text when known; .unknown for the library's own
//   reasons), its timestamp the last `timestamp` member read as an Int64 (0 when absent or not
//   an integer);
// - reasonText(in:) is at most 127 UTF-8 bytes: a prefix of that text, or else of the first
//   127 bytes as text.

func fuzzResponse(_ body: UnsafeRawBufferPointer) {
    let parsed = APNsResponse.parseErrorBody(body)
    var expectedText: String?
    var expectedTimestamp: Int64 = 0
    if case .success(let members) = JSON.topLevelMembers(body) {
        for m in members {
            let raw = UnsafeRawBufferPointer(rebasing: body[m.value])
            if m.key == "reason" { expectedText = JSON.decodeString(raw) }
            if m.key == "timestamp" { expectedTimestamp = JSON.decodeInt64(raw) ?? 0 }
        }
    }
    if let parsed {
        fuzzRequire(parsed.reasonText == expectedText, "reason \(parsed.reasonText.debugDescription), expected \(String(describing: expectedText))")
        fuzzRequire(parsed.timestampMs == expectedTimestamp, "timestamp \(parsed.timestampMs), expected \(expectedTimestamp)")
        fuzzRequire(parsed.reason == APNsReason(serverText: parsed.reasonText), "reason does not match its text")
        if parsed.reason != .unknown {
            fuzzRequire(parsed.reason.staticText.description == parsed.reasonText, "\(parsed.reason) from \(parsed.reasonText.debugDescription)")
        }
    } else {
        fuzzRequire(expectedText == nil, "no result for a body with reason \(String(describing: expectedText))")
    }

    let text = APNsResponse.reasonText(in: body)
    fuzzRequire(text.utf8.count <= 127, "GOAWAY reason of \(text.utf8.count) bytes")
    let whole = parsed?.reasonText ?? String(decoding: body.prefix(127), as: UTF8.self)
    fuzzRequire(whole.utf8.starts(with: text.utf8), "GOAWAY reason \(text.debugDescription) is not a prefix of \(whole.debugDescription)")
    fuzzRequire(whole.utf8.count <= 127 ? text == whole : text.utf8.count > 123, "GOAWAY reason cut short: \(text.debugDescription)")
}

@main enum FuzzResponseMain { static func main() { FuzzMain.run(fuzzResponse) } }
