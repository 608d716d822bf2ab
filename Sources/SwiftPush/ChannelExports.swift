#if canImport(Glibc)
import Glibc
#endif
import CSwiftPushABI
import PushCore
import PushChannels
import PushClientCore

// The channel management calls of the C ABI (broadcast push, apns.md "Broadcast push and
// channels"): a push_channels_t holds a connection to APNs's management host; each call is one
// blocking request/response on the calling thread.

/// What a `push_channels_t` points to.
final class ChannelsBox {
    /// The tag of its handles (`HandleRecord`).
    static let tag: UInt64 = 0x5350_4348_414E_4E4C // "SPCHANNL"
    let client: ChannelManagementClient

    init(client: ChannelManagementClient) { self.client = client }

    static func from(_ handle: push_channels_t?) -> ChannelsBox? {
        HandleRecord.object(handle, tag: tag, as: ChannelsBox.self)
    }
}

/// Opens a channel management client with `config`'s credentials, CA file, proxy and
/// reconnect back-off (the configuration may be freed afterwards). `host` NULL means Apple's
/// management host for the configuration's APNs host (PUSH_CHANNELS_HOST_PRODUCTION for
/// api.push.apple.com, PUSH_CHANNELS_HOST_SANDBOX for the sandbox); any other APNs host (a
/// test server) needs `host` named. `port` 0 means Apple's port for Apple's hosts (2196, 2195).
/// Nothing is sent yet: the connection opens with the first call. On success stores the handle
/// in `*channels_out` (the caller owns it: push_channels_free) and returns PUSH_OK.
/// Errors: PUSH_E_INVALID_ARGUMENT (NULL config or channels_out, negative host_len),
/// PUSH_E_BAD_OPTION (no management host known for the configuration, or port out of range),
/// PUSH_E_KEY, PUSH_E_TLS. `err` may be NULL. Thread-safe.
@c public func push_channels_open(_ config: push_config_t?, _ host: UnsafePointer<CChar>?, _ host_len: Int, _ port: Int32,
                                  _ channels_out: UnsafeMutablePointer<push_channels_t?>?,
                                  _ err: UnsafeMutablePointer<push_error>?) -> Int32 {
    guard let out = channels_out else { return report(err, .invalidArgument, "channels_out is NULL") }
    out.pointee = nil
    guard let box = ConfigBox.from(config) else { return report(err, .invalidArgument, "config is NULL or not a push_config_t") }
    guard host_len >= 0 else { return report(err, .invalidArgument, "host_len is negative") }
    let configuration: ClientConfiguration
    do throws(ClientError) {
        // The certificate options are combined (and a .p12 opened) here, as at push_client_open.
        configuration = try box.lock.withLock { box.configuration }.resolvingCredentials()
    } catch {
        return report(err, error.status, error.description)
    }
    let apple = ChannelManagementClient.managementEndpoint(forAPNsHost: configuration.endpoint.host)
    var target: (host: String, port: Int)
    if let host {
        guard let bytes = stringArgument(host, host_len, limit: 255) else { return report(err, .badOption, "host is longer than 255 bytes") }
        target = (String(decoding: bytes, as: UTF8.self), 0)
        if let a = apple, a.host == target.host { target.port = a.port }
    } else {
        guard let apple else {
            return report(err, .badOption, "no channel management host is known for \(configuration.endpoint.host): name it (host, port)")
        }
        target = apple
    }
    if port != 0 { target.port = Int(port) }
    guard target.port >= 1 && target.port <= 65535 else {
        return report(err, .badOption, port == 0 ? "name the port of \(target.host)" : "port \(port) is not in 1...65535")
    }
    do throws(ClientError) {
        let client = try ChannelManagementClient(configuration: configuration, host: target.host, port: target.port)
        guard let handle = HandleRecord.make(ChannelsBox(client: client), tag: ChannelsBox.tag) else {
            return report(err, .noMemory, "out of memory")
        }
        out.pointee = handle
        return succeed(err)
    } catch {
        return report(err, error.status, error.description)
    }
}

/// Closes the connection and releases the handle. NULL is accepted and ignored. Must not be
/// called while another thread is inside a push_channel_* call with the same handle.
@c public func push_channels_free(_ channels: push_channels_t?) {
    guard let channels, let box = ChannelsBox.from(channels) else { return }
    box.client.close()
    HandleRecord.free(channels)
}

/// Creates a broadcast channel for the app `bundle_id` with `storage_policy`
/// (PUSH_CHANNEL_NO_MESSAGE_STORED or PUSH_CHANNEL_MOST_RECENT_MESSAGE_STORED; it cannot be
/// changed later). On success writes the new channel id, NUL-terminated, into the caller's
/// `channel_id` buffer (at least PUSH_CHANNEL_ID_CAPACITY bytes, checked before anything is
/// sent, so a created channel's id is never lost), its length into `*channel_id_len` (may be
/// NULL), and returns PUSH_OK. APNs answers 201 (200 is accepted too).
/// `result` (may be NULL) receives the status, reason and apns-request-id, whatever the outcome.
/// Waits up to `timeout_ms` (negative: no limit). Errors: PUSH_E_INVALID_ARGUMENT,
/// PUSH_E_BAD_TOPIC (bundle id), PUSH_E_BUFFER_TOO_SMALL (capacity), PUSH_E_REJECTED (APNs
/// refused: see result->reason, e.g. PUSH_REASON_CANNOT_CREATE_CHANNEL_CONFIG at 10,000
/// channels), PUSH_E_CONNECT, PUSH_E_TLS, PUSH_E_TIMEOUT (the channel may or may not exist:
/// list to see). `err` may be NULL. Thread-safe (calls on one handle take turns).
@c public func push_channel_create(_ channels: push_channels_t?, _ bundle_id: UnsafePointer<CChar>?, _ bundle_id_len: Int,
                                   _ storage_policy: Int32, _ channel_id: UnsafeMutablePointer<CChar>?, _ channel_id_capacity: Int,
                                   _ channel_id_len: UnsafeMutablePointer<Int>?, _ result: UnsafeMutablePointer<push_channel_result>?,
                                   _ timeout_ms: Int32, _ err: UnsafeMutablePointer<push_error>?) -> Int32 {
    channel_id_len?.pointee = 0
    let checks = { () -> Int32? in
        guard channel_id != nil else { return report(err, .invalidArgument, "channel_id is NULL") }
        guard channel_id_capacity >= Int(PUSH_CHANNEL_ID_CAPACITY) else {
            return report(err, .bufferTooSmall, "channel_id_capacity is \(channel_id_capacity); PUSH_CHANNEL_ID_CAPACITY (\(PUSH_CHANNEL_ID_CAPACITY)) needed")
        }
        return nil
    }
    return channelCall(channels, bundle_id, bundle_id_len, nil, 0, result, timeout_ms, err, { _ in .create(storagePolicy: storage_policy) },
                       checks: checks) { answer in
        let channel_id = channel_id!
        let id = Array(answer.channelId.utf8)
        // The id's own limit (BroadcastRules) keeps it inside PUSH_CHANNEL_ID_CAPACITY; the
        // capacity is checked here too, so the two numbers can never drift into an overrun.
        if let why = ChannelMessages.answeredIdViolation(answer.channelId, "APNs created the channel, but its apns-channel-id") {
            return report(err, .internalError, why)
        }
        guard id.count < channel_id_capacity else {
            return report(err, .internalError, "APNs created the channel, but its apns-channel-id (\(id.count) bytes) does not fit channel_id")
        }
        id.withUnsafeBytes { UnsafeMutableRawPointer(channel_id).copyMemory(from: $0.baseAddress!, byteCount: id.count) }
        channel_id[id.count] = 0
        channel_id_len?.pointee = id.count
        return succeed(err)
    }
}

/// Reads a channel's configuration: `*storage_policy` (may be NULL; also in
/// result->storage_policy) receives PUSH_CHANNEL_*. Returns PUSH_OK (200), PUSH_E_REJECTED
/// (e.g. PUSH_REASON_CHANNEL_NOT_REGISTERED), or as push_channel_create; PUSH_E_BAD_CHANNEL_ID
/// for an id that is not base64. `err` may be NULL. Thread-safe.
@c public func push_channel_read(_ channels: push_channels_t?, _ bundle_id: UnsafePointer<CChar>?, _ bundle_id_len: Int,
                                 _ channel_id: UnsafePointer<CChar>?, _ channel_id_len: Int, _ storage_policy: UnsafeMutablePointer<Int32>?,
                                 _ result: UnsafeMutablePointer<push_channel_result>?, _ timeout_ms: Int32,
                                 _ err: UnsafeMutablePointer<push_error>?) -> Int32 {
    storage_policy?.pointee = -1
    return channelCall(channels, bundle_id, bundle_id_len, channel_id, channel_id_len, result, timeout_ms, err, { .read(channelId: $0!) }, needsChannel: true) { answer in
        let parsed = answer.body.withUnsafeBytes { ChannelMessages.configuration($0) }
        guard case .success(let c) = parsed else {
            return report(err, .internalError, "APNs answered the read with a body that is not a channel configuration")
        }
        storage_policy?.pointee = c.storagePolicy
        if let result, ChannelResultRecord.writable(result) { result.pointee.storage_policy = c.storagePolicy }
        return succeed(err)
    }
}

/// Deletes a channel (APNs answers 204; the id is never reused). Returns PUSH_OK, or as
/// push_channel_read. `err` may be NULL. Thread-safe.
@c public func push_channel_delete(_ channels: push_channels_t?, _ bundle_id: UnsafePointer<CChar>?, _ bundle_id_len: Int,
                                   _ channel_id: UnsafePointer<CChar>?, _ channel_id_len: Int,
                                   _ result: UnsafeMutablePointer<push_channel_result>?, _ timeout_ms: Int32,
                                   _ err: UnsafeMutablePointer<push_error>?) -> Int32 {
    channelCall(channels, bundle_id, bundle_id_len, channel_id, channel_id_len, result, timeout_ms, err, { .delete(channelId: $0!) }, needsChannel: true) { _ in
        succeed(err)
    }
}

/// Lists the app's channel ids. On PUSH_OK stores a list in `*list` that the caller owns and
/// releases with push_channel_ids_free (an app without channels gets a list of 0 ids); on
/// error stores NULL. The ids are as APNs wrote them, each held to the rule of a created one
/// (padded standard base64, at most 256 bytes). Errors: as push_channel_create,
/// PUSH_E_NO_MEMORY; PUSH_E_INTERNAL when the answer is not a list of such ids (the message
/// names the id and what is wrong with it). `err` may be NULL.
/// Thread-safe.
@c public func push_channel_list(_ channels: push_channels_t?, _ bundle_id: UnsafePointer<CChar>?, _ bundle_id_len: Int,
                                 _ list: UnsafeMutablePointer<UnsafeMutablePointer<push_channel_ids>?>?,
                                 _ result: UnsafeMutablePointer<push_channel_result>?, _ timeout_ms: Int32,
                                 _ err: UnsafeMutablePointer<push_error>?) -> Int32 {
    list?.pointee = nil
    let checks = { () -> Int32? in list == nil ? report(err, .invalidArgument, "list is NULL") : nil }
    return channelCall(channels, bundle_id, bundle_id_len, nil, 0, result, timeout_ms, err, { _ in .list }, checks: checks) { answer in
        let list = list!
        let ids: [String]
        switch answer.body.withUnsafeBytes({ ChannelMessages.channelIds($0) }) {
        case .success(let read): ids = read
        case .failure(let why):
            return report(err, .internalError, "APNs answered the list with a body that is not {\"channels\": [<channel ids>]}: \(why.message)")
        }
        guard let block = ChannelListBlock.make(ids) else { return report(err, .noMemory, "out of memory for \(ids.count) channel ids") }
        list.pointee = block
        return succeed(err)
    }
}

/// Releases a list from push_channel_list. NULL is accepted and ignored.
@c public func push_channel_ids_free(_ list: UnsafeMutablePointer<push_channel_ids>?) {
    guard let list else { return }
    free(UnsafeMutableRawPointer(list))
}

// MARK: - Shared by the calls

/// Checks `result` and clears it (it is filled whatever the outcome), runs the call's own
/// argument `checks` (a status to return, or nil), checks the handle and the shared arguments,
/// builds the request, sends it, fills `result`, and hands a successful answer to `onSuccess`.
private func channelCall(_ channels: push_channels_t?, _ bundle: UnsafePointer<CChar>?, _ bundleLength: Int,
                         _ channel: UnsafePointer<CChar>?, _ channelLength: Int,
                         _ result: UnsafeMutablePointer<push_channel_result>?, _ timeout: Int32,
                         _ err: UnsafeMutablePointer<push_error>?,
                         _ operation: (String?) -> ChannelRequest.Operation,
                         needsChannel: Bool = false,
                         checks: () -> Int32? = { nil },
                         _ onSuccess: (ChannelManagementClient.Answer) -> Int32) -> Int32 {
    if let result {
        guard ChannelResultRecord.writable(result) else {
            return report(err, .invalidArgument, "push_channel_result.struct_size is \(result.pointee.struct_size); expected sizeof(push_channel_result)")
        }
        ChannelResultRecord.clear(result)
    }
    if let refused = checks() { return refused }
    guard let box = ChannelsBox.from(channels) else { return report(err, .invalidArgument, "channels is NULL or not a push_channels_t") }
    guard let bundle else { return report(err, .badTopic, "bundle_id is NULL") }
    guard bundleLength >= 0 else { return report(err, .badTopic, "bundle_id_len is negative") }
    guard let bundleBytes = stringArgument(bundle, bundleLength, limit: BroadcastRules.maxBundleIdBytes) else {
        return report(err, .badTopic, "bundle_id is longer than \(BroadcastRules.maxBundleIdBytes) bytes")
    }
    var channelId: String?
    if let channel {
        guard channelLength >= 0, let bytes = stringArgument(channel, channelLength, limit: BroadcastRules.maxChannelIdBytes) else {
            return report(err, .badChannelId, "channel_id is longer than \(BroadcastRules.maxChannelIdBytes) bytes")
        }
        channelId = String(decoding: bytes, as: UTF8.self) // checked by ChannelRequest below
    } else if needsChannel {
        return report(err, .badChannelId, "channel_id is NULL")
    }
    let request: ChannelRequest
    do throws(NotificationRules.Violation) {
        request = try ChannelRequest(operation(channelId), bundleId: String(decoding: bundleBytes, as: UTF8.self))
    } catch {
        return report(err, error.status, error.message)
    }
    switch box.client.send(request, timeoutMillis: timeout) {
    case .failure(let e):
        return report(err, e.status, e.description)
    case .success(let answer):
        if let result { ChannelResultRecord.fill(result, answer) }
        guard answer.succeeded else {
            return report(err, .rejected, "APNs refused the \(request.method) \(request.path): \(answer.status) \(answer.reasonText)")
        }
        return onSuccess(answer)
    }
}

/// The caller's `push_channel_result`, written as far as its struct_size says.
enum ChannelResultRecord {
    static func writable(_ r: UnsafeMutablePointer<push_channel_result>) -> Bool {
        let size = Int(r.pointee.struct_size)
        return size == 0 || size >= MemoryLayout<push_channel_result>.size
    }

    static func clear(_ r: UnsafeMutablePointer<push_channel_result>) {
        r.initialize(to: push_channel_result())
        r.pointee.struct_size = UInt32(MemoryLayout<push_channel_result>.size)
        r.pointee.storage_policy = -1
    }

    static func fill(_ r: UnsafeMutablePointer<push_channel_result>, _ a: ChannelManagementClient.Answer) {
        r.pointee.status = a.status
        r.pointee.reason = a.reason.rawValue
        copyText(a.requestId, into: &r.pointee.request_id)
        copyText(a.reasonText, into: &r.pointee.reason_text)
    }

    /// Copies `text` NUL-terminated into a fixed char array, cut to fit.
    private static func copyText<T>(_ text: String, into field: inout T) {
        withUnsafeMutableBytes(of: &field) { dst in
            let bytes = Array(text.utf8.prefix(dst.count - 1))
            dst.copyBytes(from: bytes)
            dst[bytes.count] = 0
        }
    }
}

/// A `push_channel_ids` and its strings in one malloc'd block (freed with one free()).
enum ChannelListBlock {
    static func make(_ ids: [String]) -> UnsafeMutablePointer<push_channel_ids>? {
        let header = MemoryLayout<push_channel_ids>.stride
        let pointers = ids.count * MemoryLayout<UnsafePointer<CChar>>.stride
        let strings = ids.reduce(0) { $0 + $1.utf8.count + 1 }
        guard let raw = malloc(header + pointers + strings) else { return nil }
        let table = (raw + header).bindMemory(to: UnsafePointer<CChar>?.self, capacity: max(ids.count, 1))
        var at = raw + header + pointers
        for (i, id) in ids.enumerated() {
            let bytes = Array(id.utf8)
            bytes.withUnsafeBytes { at.copyMemory(from: $0.baseAddress!, byteCount: bytes.count) }
            at.storeBytes(of: 0, toByteOffset: bytes.count, as: UInt8.self)
            table[i] = UnsafePointer(at.assumingMemoryBound(to: CChar.self))
            at += bytes.count + 1
        }
        let list = raw.bindMemory(to: push_channel_ids.self, capacity: 1)
        list.initialize(to: push_channel_ids(count: ids.count, ids: ids.isEmpty ? nil : UnsafePointer(table)))
        return list
    }
}
