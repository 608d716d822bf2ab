import CSwiftPushABI
import FuzzSupport
import PushCore
import SwiftPush

private let payloadFields: [Int32] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 20, 21, 22, 30, 31, 32, 33, 34, 35, 36, 40, 50, 51]

/// A PUSH_PAYLOAD_* constant, now and then any number.
private func field(_ input: inout FuzzInput) -> Int32 {
    input.choose(8) == 0 ? input.smallInt32(upTo: 60) : input.pick(payloadFields)
}

/// One push_payload_* call with fuzzed arguments, or a build whose output is checked.
func payloadStep(_ input: inout FuzzInput, _ session: Session) {
    let p = session.payload
    var err = push_error()
    switch input.choose(9) {
    case 0, 1:
        let f = field(&input)
        let v = CString.fuzzed(&input, limit: nil)
        let rc = push_payload_set_string(p, f, v.pointer, v.length, &err)
        checkStatus(rc, err, allowed: [.invalidArgument, .badPayload], "push_payload_set_string(\(f))")
    case 2:
        let f = field(&input)
        let v = CString.fuzzed(&input, limit: nil)
        checkStatus(push_payload_add_loc_arg(p, f, v.pointer, v.length, &err), err, allowed: [.invalidArgument, .badPayload], "push_payload_add_loc_arg")
    case 3:
        let f = field(&input)
        let value = input.int64()
        let rc = push_payload_set_int(p, f, value, &err)
        checkStatus(rc, err, allowed: [.invalidArgument, .badPayload, .badPushType], "push_payload_set_int(\(f), \(value))")
        if rc == 0 && f == Int32(PUSH_PAYLOAD_PUSH_TYPE.rawValue) { session.payloadType = PushType(rawValue: Int32(value))! }
    case 4:
        let f = field(&input)
        checkStatus(push_payload_set_double(p, f, input.double(), &err), err, allowed: [.invalidArgument, .badPayload], "push_payload_set_double")
    case 5:
        let name = CString.fuzzed(&input, limit: nil)
        let rc = push_payload_set_critical_sound(p, name.pointer, name.length, input.double(), &err)
        checkStatus(rc, err, allowed: [.invalidArgument, .badPayload], "push_payload_set_critical_sound")
    case 6:
        let f = field(&input)
        let json = CString.fuzzed(&input, limit: nil)
        checkStatus(push_payload_set_raw(p, f, json.pointer, json.length, &err), err, allowed: [.invalidArgument, .badPayload], "push_payload_set_raw")
    case 7:
        let key = CString.fuzzed(&input, limit: nil)
        let json = CString.fuzzed(&input, limit: nil)
        checkStatus(push_payload_set_custom(p, key.pointer, key.length, json.pointer, json.length, &err), err,
                    allowed: [.invalidArgument, .badPayload], "push_payload_set_custom")
    default:
        if input.choose(3) == 0 {
            let f = field(&input)
            let rc = push_payload_clear(p, f, &err)
            checkStatus(rc, err, allowed: [.invalidArgument], "push_payload_clear(\(f))")
            if rc == 0 && f == Int32(PUSH_PAYLOAD_PUSH_TYPE.rawValue) { session.payloadType = .alert }
        } else {
            build(&input, session)
        }
    }
}

/// push_payload_build into a NULL, short, exact or large buffer; push_topic_for likewise.
private func build(_ input: inout FuzzInput, _ session: Session) {
    var err = push_error()
    var length = -1
    let rc = push_payload_build(session.payload, nil, 0, &length, &err)
    checkStatus(rc, err, allowed: [.badPayload, .payloadTooLarge], "push_payload_build (size)")
    let limit = session.payloadType.payloadLimit
    if rc == PushStatus.payloadTooLarge.rawValue { fuzzRequire(length > limit, "too large at \(length) for \(limit)") }
    guard rc == 0 else { return }
    fuzzRequire((0...limit).contains(length), "built \(length) bytes for a limit of \(limit)")
    let capacity = input.pick([0, length, length + 1, length + 100, -1])
    let buffer = UnsafeMutablePointer<CChar>.allocate(capacity: max(capacity, 1))
    defer { buffer.deallocate() }
    var written = -1
    let rc2 = push_payload_build(session.payload, buffer, capacity, &written, &err)
    fuzzRequire(written == (capacity < 0 ? 0 : length), "out_length \(written), expected \(length)")
    if capacity < 0 {
        checkStatus(rc2, err, allowed: [.invalidArgument], "push_payload_build with a negative capacity")
        return fuzzRequire(rc2 == PushStatus.invalidArgument.rawValue, "negative capacity accepted")
    }
    checkStatus(rc2, err, allowed: [.bufferTooSmall], "push_payload_build (capacity \(capacity))")
    fuzzRequire((rc2 == 0) == (capacity > length), "capacity \(capacity) for \(length) bytes gave \(rc2)")
    guard rc2 == 0 else { return }
    fuzzRequire(buffer[length] == 0, "built payload not NUL-terminated")
    let json = UnsafeRawBufferPointer(start: buffer, count: length)
    fuzzRequire(json.first == UInt8(ascii: "{") && JSON.validate(json) == nil, "built payload is not valid JSON: \(show(json))")

    let bundle = CString.fuzzed(&input, limit: nil)
    let type = input.smallInt32(upTo: 11)
    var topicLength = -1
    var topic = [CChar](repeating: 0, count: 300)
    let rc3 = push_topic_for(bundle.pointer, bundle.length, type, &topic, topic.count, &topicLength, &err)
    checkStatus(rc3, err, allowed: [.invalidArgument, .badPushType, .badTopic], "push_topic_for")
    if rc3 == 0, let pushType = PushType(rawValue: type) {
        let bytes = topic.prefix(topicLength).map { UInt8(bitPattern: $0) }
        fuzzRequire(topic[topicLength] == 0, "topic not NUL-terminated")
        fuzzRequire(bytes.withUnsafeBytes { NotificationRules.checkTopic($0, pushType: pushType) } == nil,
                    "push_topic_for gave \(show(bytes)), which the topic rule refuses for \(pushType)")
    }
}
