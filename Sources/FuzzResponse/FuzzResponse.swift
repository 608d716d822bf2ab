import FuzzSupport
import PushCore

// APNs error bodies (`{"reason":"...","timestamp":...}`) and GOAWAY debug data, as a server
// (or anything between it and us) might send them. Properties:
// - parseErrorBody gives a result exactly when the body is a JSON object whose last `reason`
//   member is a string; its text is that string decoded, its reason the table's entry for the
//   text (spelled exactly as the text when known), its timestamp the last `timestamp` member
//   read as an Int64 (0 when absent or not an integer);
// - reasonText(in:) is that text, or else the first 127 bytes as text.

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
        fuzzRequire(parsed.reason == APNsReason(text: parsed.reasonText), "reason does not match its text")
        if parsed.reason != .unknown {
            fuzzRequire(parsed.reason.staticText.description == parsed.reasonText, "\(parsed.reason) from \(parsed.reasonText.debugDescription)")
        }
    } else {
        fuzzRequire(expectedText == nil, "no result for a body with reason \(String(describing: expectedText))")
    }

    let text = APNsResponse.reasonText(in: body)
    if let parsed {
        fuzzRequire(text == parsed.reasonText, "GOAWAY reason \(text.debugDescription) differs from the body's")
    } else {
        fuzzRequire(text == String(decoding: body.prefix(127), as: UTF8.self), "GOAWAY text is not the first 127 bytes")
    }
}

@main enum FuzzResponseMain { static func main() { FuzzMain.run(fuzzResponse) } }
