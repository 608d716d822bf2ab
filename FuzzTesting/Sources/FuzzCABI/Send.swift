import CSwiftPushABI
import FuzzSupport
import PushCore
import SwiftPush

/// A fuzzed push_notification and the buffers it points to.
final class FuzzNotification {
    let token, topic, payload, collapse, apnsId: CString
    /// A broadcast's channel id (`channel_id`), set on one notification in four.
    let channel: CString?
    var record = push_notification()

    init(_ input: inout FuzzInput) {
        // 0 (the first version), the current size, the second version's (without deadline_ms),
        // and two that name no version.
        let sizes = [UInt32(0), UInt32(MemoryLayout<push_notification>.size), UInt32(secondVersionSize),
                     UInt32(MemoryLayout<push_notification>.size - 4), 1]
        record.struct_size = input.choose(8) == 0 ? input.pick(sizes) : 0
        // Read only from a current-size record: negative is refused, the rest (long enough for
        // a notification to end by its answer, not its deadline) taken.
        record.deadline_ms = input.choose(8) == 0 ? input.pick([-1, Int64.min, 60_000, Int64.max]) : 0
        record.push_type = input.smallInt32(upTo: 11)
        record.priority = input.choose(4) == 0 ? input.int32() : input.pick([0, 10, 5, 1, 0, 3])
        record.flags = input.choose(3) == 0 ? input.uint32() : 0
        record.expiration = input.int64()
        record.tag = UInt64(bitPattern: input.int64())
        token = .fuzzed(&input, limit: NotificationRules.maxDeviceTokenHexDigits)
        topic = .fuzzed(&input, limit: NotificationRules.maxTopicBytes)
        payload = .fuzzed(&input, limit: PushType.allCases.map(\.payloadLimit).max()!)
        collapse = .fuzzed(&input, limit: NotificationRules.maxCollapseIdBytes)
        apnsId = .fuzzed(&input, limit: 36)
        record.device_token = UnsafePointer(token.pointer)
        record.device_token_len = token.length
        record.topic = UnsafePointer(topic.pointer)
        record.topic_len = topic.length
        record.payload = UnsafePointer(payload.pointer)
        record.payload_len = payload.length
        record.collapse_id = UnsafePointer(collapse.pointer)
        record.collapse_id_len = collapse.length
        record.apns_id = UnsafePointer(apnsId.pointer)
        record.apns_id_len = apnsId.length
        if input.choose(4) == 0 {
            // A broadcast: a current-size record (the first version has no channel_id), and
            // often what a valid one needs, so that the rules past the first are reached too.
            let c = CString.fuzzed(&input, limit: BroadcastRules.maxChannelIdBytes,
                                   content: input.choose(2) == 0 ? Array("dHVuYS1zY29yZXMtMjAyNg==".utf8) : nil)
            channel = c
            record.struct_size = UInt32(MemoryLayout<push_notification>.size)
            record.channel_id = UnsafePointer(c.pointer)
            record.channel_id_len = c.length
            // Sometimes without a device token and collapse id, as a valid broadcast has none
            // (in a batch led by a first-version record it is read as a device notification
            // without a token: `violations` judges the record's pointers for that).
            if c.pointer != nil && input.choose(2) == 0 {
                record.device_token = nil
                record.collapse_id = nil
                record.push_type = BroadcastRules.pushType.rawValue
                record.flags |= UInt32(PUSH_NOTIFICATION_HAS_EXPIRATION.rawValue)
                record.expiration = 0
            }
        } else {
            channel = nil
        }
    }

    /// The library reads `channel_id` (a record of the second version or later) and finds one:
    /// a broadcast.
    var isBroadcast: Bool {
        record.struct_size >= UInt32(secondVersionSize) && isVersionSize && record.channel_id != nil
    }

    /// `struct_size` names a version the library reads (`NotificationRecord.isVersionSize`).
    var isVersionSize: Bool {
        let size = Int(record.struct_size)
        return size == 0 || size == firstVersionSize || size == secondVersionSize || size >= MemoryLayout<push_notification>.size
    }

    /// The statuses that BroadcastRules says this broadcast deserves (empty: valid).
    var broadcastViolations: Set<PushStatus> {
        var v = Set<PushStatus>()
        if let channel, channel.oversized || channel.withSeen({ BroadcastRules.checkChannelId($0) })! != nil { v.insert(.badChannelId) }
        if record.device_token != nil { v.insert(.badDeviceToken) }
        if record.collapse_id != nil { v.insert(.badCollapseId) }
        if record.push_type != BroadcastRules.pushType.rawValue { v.insert(.badPushType) }
        let bundleViolation = topic.pointer == nil
            ? Array(defaultTopic.utf8).withUnsafeBytes { BroadcastRules.checkBundleId($0) }
            : topic.oversized ? .init(.badTopic, "") : topic.withSeen { BroadcastRules.checkBundleId($0) }!
        if bundleViolation != nil { v.insert(.badTopic) }
        if case .failure = BroadcastRules.resolvePriority(record.priority) { v.insert(.badPriority) }
        if record.flags & UInt32(PUSH_NOTIFICATION_HAS_EXPIRATION.rawValue) == 0
            || NotificationRules.checkExpiration(record.expiration) != nil { v.insert(.badExpiration) }
        if payload.oversized || payload.withSeen({ BroadcastRules.checkPayload($0) }) != .some(nil) {
            v.insert(.badPayload)
            v.insert(.payloadTooLarge)
        }
        if apnsId.pointer != nil, apnsId.oversized || apnsId.withSeen({ NotificationRules.checkApnsId($0) })! != nil { v.insert(.badApnsId) }
        return v
    }

    /// The statuses that NotificationRules says this notification deserves (empty: valid).
    var violations: Set<PushStatus> {
        var v = Set<PushStatus>()
        if !isVersionSize { v.insert(.invalidArgument) }
        if record.struct_size >= UInt32(MemoryLayout<push_notification>.size) && record.deadline_ms < 0 { v.insert(.invalidArgument) }
        if isBroadcast { return v.union(broadcastViolations) }
        guard let type = PushType(rawValue: record.push_type) else { v.insert(.badPushType); return v }
        // The record's pointers, not the buffers: a broadcast-built record read as a device
        // notification (a batch of first-version records) has neither token nor collapse id.
        if record.device_token == nil || token.oversized || token.withSeen({ NotificationRules.checkDeviceToken($0) }) != .some(nil) {
            v.insert(.badDeviceToken)
        }
        let topicViolation = topic.pointer == nil
            ? Array(defaultTopic.utf8).withUnsafeBytes { NotificationRules.checkTopic($0, pushType: type) }
            : topic.oversized ? .init(.badTopic, "") : topic.withSeen { NotificationRules.checkTopic($0, pushType: type) }!
        if topicViolation != nil { v.insert(.badTopic) }
        if case .failure = NotificationRules.resolvePriority(record.priority, pushType: type) { v.insert(.badPriority) }
        if payload.oversized || payload.withSeen({ NotificationRules.checkPayload($0, pushType: type) }) != .some(nil) {
            v.insert(.badPayload)
            v.insert(.payloadTooLarge)
        }
        if record.collapse_id != nil, collapse.pointer != nil, collapse.oversized || collapse.withSeen({ NotificationRules.checkCollapseId($0) })! != nil { v.insert(.badCollapseId) }
        if apnsId.pointer != nil, apnsId.oversized || apnsId.withSeen({ NotificationRules.checkApnsId($0) })! != nil { v.insert(.badApnsId) }
        if record.flags & UInt32(PUSH_NOTIFICATION_HAS_EXPIRATION.rawValue) != 0,
           NotificationRules.checkExpiration(record.expiration) != nil { v.insert(.badExpiration) }
        return v
    }
}

private let sendStatuses: Set<PushStatus> = [.invalidArgument, .badDeviceToken, .badTopic, .badPushType, .badPriority,
                                             .badPayload, .payloadTooLarge, .badCollapseId, .badApnsId, .badExpiration,
                                             .badChannelId, .queueFull]

/// A status agrees with the rules: success (or a full queue) exactly when nothing is wrong,
/// otherwise one of the things that are wrong.
private func checkAgainstRules(_ rc: Int32, _ n: FuzzNotification, _ call: String) {
    let status = PushStatus(rawValue: rc) ?? .internalError
    let violations = n.violations
    if status == .ok || status == .queueFull {
        fuzzRequire(violations.isEmpty, "\(call) accepted a notification that breaks \(violations)")
    } else {
        fuzzRequire(violations.contains(status), "\(call) refused with \(status), but the rules say \(violations)")
    }
}

/// The sizes of the older versions of `push_notification` (docs/abi.md: records grow at their end).
let firstVersionSize = MemoryLayout<push_notification>.offset(of: \push_notification.channel_id)!
let secondVersionSize = MemoryLayout<push_notification>.offset(of: \push_notification.deadline_ms)!

func sendOne(_ input: inout FuzzInput, _ session: Session) {
    let n = FuzzNotification(&input)
    var err = push_error()
    let rc = push_client_send(sharedClient, &n.record, 0, &err)
    checkStatus(rc, err, allowed: sendStatuses, "push_client_send")
    checkAgainstRules(rc, n, "push_client_send")
    if rc == PushStatus.queueFull.rawValue { drainResults(wait: true) }
}

func sendBatch(_ input: inout FuzzInput, _ session: Session) {
    let batch = (0...input.choose(3)).map { _ in FuzzNotification(&input) }
    // The array's records share the first one's struct_size, which is also their stride
    // (push_client_send_batch): 0 is the first version, PUSH_NOTIFICATION_SIZE_V1 bytes apart.
    let size = batch[0].record.struct_size
    for n in batch { n.record.struct_size = size }
    let stride = size == 0 ? firstVersionSize : Int(size) == secondVersionSize ? secondVersionSize : MemoryLayout<push_notification>.stride
    let records = UnsafeMutableRawPointer.allocate(byteCount: stride * batch.count, alignment: MemoryLayout<push_notification>.alignment)
    defer { records.deallocate() }
    for (i, n) in batch.enumerated() {
        withUnsafeBytes(of: n.record) { (records + i * stride).copyMemory(from: $0.baseAddress!, byteCount: stride) }
    }
    var err = push_error()
    var accepted = -1
    let rc = push_client_send_batch(sharedClient, records.assumingMemoryBound(to: push_notification.self), batch.count, 0, &accepted, &err)
    checkStatus(rc, err, allowed: sendStatuses, "push_client_send_batch")
    fuzzRequire((0...batch.count).contains(accepted), "accepted \(accepted) of \(batch.count)")
    fuzzRequire((rc == 0) == (accepted == batch.count), "status \(rc) with \(accepted) of \(batch.count) accepted")
    for n in batch.prefix(accepted) { fuzzRequire(n.violations.isEmpty, "the batch accepted a notification that breaks \(n.violations)") }
    if accepted < batch.count { checkAgainstRules(rc, batch[accepted], "push_client_send_batch") }
    if rc == PushStatus.queueFull.rawValue { drainResults(wait: true) }
}
