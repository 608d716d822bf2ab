#if canImport(Glibc)
import Glibc
#endif
import CSwiftPushABI
import PushCore
import PushClientCore

// The public C ABI of libswiftpush.so. Every function here is exported with @c and declared in
// Include/swiftpush.h, which scripts/gen_header.py generates from this module's compiler-made
// header; the doc comments below are the header's documentation.

// MARK: - Library

/// Returns the library's version as a static NUL-terminated string ("MAJOR.MINOR.PATCH").
/// Never NULL; thread-safe.
@c public func push_version() -> UnsafePointer<CChar> {
    UnsafeRawPointer(swiftpushVersion.utf8Start).assumingMemoryBound(to: CChar.self)
}

/// Returns a static NUL-terminated message for a PUSH_* status code ("unknown status code" for
/// values that are not one). Never NULL; thread-safe; the string must not be freed.
@c public func push_strerror(_ code: Int32) -> UnsafePointer<CChar> {
    let text: StaticString = PushStatus(rawValue: code)?.message ?? "unknown status code"
    return UnsafeRawPointer(text.utf8Start).assumingMemoryBound(to: CChar.self)
}

/// Returns the APNs spelling of a PUSH_REASON_* value ("BadDeviceToken", "Unregistered", ...;
/// "" for PUSH_REASON_NONE, "Unknown" for values not in the table) as a static NUL-terminated
/// string. Never NULL; thread-safe.
@c public func push_reason_name(_ reason: Int32) -> UnsafePointer<CChar> {
    let text: StaticString = APNsReason(rawValue: reason)?.staticText ?? "Unknown"
    return UnsafeRawPointer(text.utf8Start).assumingMemoryBound(to: CChar.self)
}

// MARK: - Configuration

/// Creates an empty configuration with the defaults listed at each PUSH_OPT_*. Returns NULL
/// only when memory is exhausted. The caller owns it and releases it with push_config_free.
/// A configuration may be used from one thread at a time.
@c public func push_config_new() -> push_config_t? {
    HandleRecord.make(ConfigBox(), tag: ConfigBox.tag)
}

/// Releases a configuration. NULL is accepted and ignored. Clients opened from it are not
/// affected.
@c public func push_config_free(_ config: push_config_t?) {
    guard let config, ConfigBox.from(config) != nil else { return }
    HandleRecord.free(config)
}

/// Sets a string option (PUSH_OPT_HOST, PUSH_OPT_CA_FILE, PUSH_OPT_TOKEN_KEY_FILE,
/// PUSH_OPT_TOKEN_KEY_PEM, PUSH_OPT_KEY_ID, PUSH_OPT_TEAM_ID, PUSH_OPT_DEFAULT_TOPIC,
/// PUSH_OPT_PROXY, PUSH_OPT_PROXY_CREDENTIALS, PUSH_OPT_CERT_FILE, PUSH_OPT_CERT_KEY_FILE,
/// PUSH_OPT_P12_FILE, PUSH_OPT_P12_PASSWORD). `value` is copied; `length` 0 means
/// NUL-terminated. Key files are read and checked at once (PUSH_OPT_TOKEN_KEY_FILE: a P-256
/// PKCS#8 key; PUSH_OPT_P12_FILE: read and checked to be PKCS#12), so an unreadable or invalid
/// key is reported here; the .p12 is opened with PUSH_OPT_P12_PASSWORD by push_client_open, so
/// the two may be set in either order and a wrong password is reported there.
/// Values are text (UTF-8 without NUL bytes, at most PATH_MAX bytes), except
/// PUSH_OPT_TOKEN_KEY_PEM (at most 64 KiB, kept in memory that is cleared when the
/// configuration is freed); a longer `length` is refused before any byte is read. PUSH_OPT_KEY_ID
/// and PUSH_OPT_TEAM_ID must be printable ASCII; PUSH_OPT_DEFAULT_TOPIC printable ASCII without
/// spaces ("" for none).
/// Errors: PUSH_E_INVALID_ARGUMENT (NULL config or value, negative length), PUSH_E_BAD_OPTION
/// (not a string option, or a malformed value: too long, not UTF-8, a NUL byte inside),
/// PUSH_E_KEY (key or certificate unreadable or invalid). Messages never quote key material.
/// `err` may be NULL. Not thread-safe for the same configuration.
@c public func push_config_set_string(_ config: push_config_t?, _ option: Int32,
                                      _ value: UnsafePointer<CChar>?, _ length: Int,
                                      _ err: UnsafeMutablePointer<push_error>?) -> Int32 {
    guard let box = ConfigBox.from(config) else { return report(err, .invalidArgument, "config is NULL or not a push_config_t") }
    guard let known = PushOption(rawValue: option), known.kind == .string else {
        return report(err, .badOption, "option \(option) is not a string option")
    }
    guard let value else { return report(err, .invalidArgument, "value is NULL") }
    guard length >= 0 else { return report(err, .invalidArgument, "length is negative") }
    // A length larger than any valid value is refused before a byte is read.
    guard let bytes = stringArgument(value, length, limit: known.maxValueBytes) else {
        return report(err, known.valueTooLong.status, known.valueTooLong.description)
    }
    return box.lock.withLock { () -> Int32 in
        do throws(ClientError) {
            try box.configuration.set(known, string: bytes)
            return succeed(err)
        } catch {
            return report(err, error.status, error.description)
        }
    }
}

/// Sets an integer option (PUSH_OPT_PORT, PUSH_OPT_ENVIRONMENT, PUSH_OPT_CONNECTIONS,
/// PUSH_OPT_MAX_STREAMS, PUSH_OPT_QUEUE_CAPACITY, PUSH_OPT_DEADLINE_MS,
/// PUSH_OPT_CONNECT_TIMEOUT_MS, PUSH_OPT_MAX_ATTEMPTS, PUSH_OPT_RETRY_DELAY_MS,
/// PUSH_OPT_IDLE_PING_MS, PUSH_OPT_PING_TIMEOUT_MS, PUSH_OPT_RETIRE_AFTER_TIMEOUTS,
/// PUSH_OPT_IO_THREADS, PUSH_OPT_RECONNECT_MAX_MS).
/// Errors: PUSH_E_INVALID_ARGUMENT (NULL config), PUSH_E_BAD_OPTION (not an integer option, or
/// the value outside the range given at the option). `err` may be NULL. Not thread-safe for the
/// same configuration.
@c public func push_config_set_int(_ config: push_config_t?, _ option: Int32, _ value: Int64,
                                   _ err: UnsafeMutablePointer<push_error>?) -> Int32 {
    guard let box = ConfigBox.from(config) else { return report(err, .invalidArgument, "config is NULL or not a push_config_t") }
    guard let known = PushOption(rawValue: option), known.kind == .int else {
        return report(err, .badOption, "option \(option) is not an integer option")
    }
    return box.lock.withLock { () -> Int32 in
        do throws(ClientError) {
            try box.configuration.set(known, int: value)
            return succeed(err)
        } catch {
            return report(err, error.status, error.description)
        }
    }
}

/// Sends results to `callback` instead of push_client_poll. The client's I/O thread calls
/// `callback(user_data, results, count)` with batches of results (count >= 1); the records are
/// valid only during the call, and `user_data` is passed back as given (the caller keeps what it
/// points to alive until push_client_close has returned). The callback runs on the I/O thread:
/// keep it short; push_client_close and push_client_free called from it are refused (they
/// return PUSH_E_INVALID_ARGUMENT / do nothing: close from another thread); push_client_send
/// from it never waits (a full queue returns PUSH_E_QUEUE_FULL). Results of notifications sent
/// while close is finishing may be delivered on the sending thread. With a callback set,
/// push_client_poll returns no results. A NULL callback goes back to polling.
/// Errors: PUSH_E_INVALID_ARGUMENT (NULL or wrong config). `err` may be NULL.
@c public func push_config_set_result_callback(_ config: push_config_t?, _ callback: push_result_callback?,
                                               _ user_data: UnsafeMutableRawPointer?,
                                               _ err: UnsafeMutablePointer<push_error>?) -> Int32 {
    guard let box = ConfigBox.from(config) else { return report(err, .invalidArgument, "config is NULL or not a push_config_t") }
    box.lock.withLock {
        box.configuration.callbacks.result = callback.map { ResultCallback(function: $0, userData: user_data) }
    }
    return succeed(err)
}

/// Sends the client's log events to `callback(user_data, level, event, message)`, for events of
/// `min_level` (PUSH_LOG_DEBUG, _INFO, _WARNING or _ERROR) and above. Default: silent. Called on
/// the client's I/O thread (with PUSH_OPT_IO_THREADS > 1, from any of them, possibly at once);
/// keep it short. Messages never contain key material, provider tokens, device tokens or
/// payloads. The events (stable names):
///   connection.connecting  DEBUG    a connection attempt starts (host, port, pool position)
///   connection.ready       INFO     the server's SETTINGS arrived (its stream limit)
///   connection.closed      INFO/WARNING  a connection ended (the error, the GOAWAY reason)
///   connection.retired     INFO     the client stopped giving a connection new notifications
///   pool.resized           INFO     a self-sizing pool opens or closes a connection (and why)
///   reconnect.scheduled    WARNING  a refusal or failed attempt, and the back-off before the next
///   token.signed           INFO     the provider token was re-signed (generation, iat)
///   tls.failure            ERROR    a TLS handshake or certificate failure
///   protocol.error         ERROR    an HTTP/2 protocol error, or a server that is not HTTP/2
///   callback.slow          WARNING  the result callback held the I/O thread for over 100 ms
///   connection.unreachable ERROR    no connection could be made for PUSH_OPT_UNREACHABLE_AFTER_MS:
///                                   notifications end Unreachable until one is
///   connection.reachable   INFO     a connection was made after that: notifications are sent again
/// A NULL callback turns logging off. Errors: PUSH_E_INVALID_ARGUMENT (NULL or wrong config),
/// PUSH_E_BAD_OPTION (min_level not one of the PUSH_LOG_* values). `err` may be NULL.
@c public func push_config_set_log_callback(_ config: push_config_t?, _ callback: push_log_callback?,
                                            _ user_data: UnsafeMutableRawPointer?, _ min_level: Int32,
                                            _ err: UnsafeMutablePointer<push_error>?) -> Int32 {
    guard let box = ConfigBox.from(config) else { return report(err, .invalidArgument, "config is NULL or not a push_config_t") }
    guard LogLevel(rawValue: min_level) != nil else {
        return report(err, .badOption, "min_level must be PUSH_LOG_DEBUG (10), PUSH_LOG_INFO (20), PUSH_LOG_WARNING (30) or PUSH_LOG_ERROR (40), got \(min_level)")
    }
    box.lock.withLock {
        box.configuration.callbacks.log = callback.map { LogCallback(function: $0, userData: user_data, minLevel: min_level) }
    }
    return succeed(err)
}

// MARK: - Client

/// Largest record size accepted from callers (push_result grows at its end; 64 KiB is far
/// beyond any version of it).
private let maxRecordSize = 64 * 1024

/// Opens a client: checks the configuration, signs the first provider token, and starts the
/// client's I/O thread, which connects in the background (see push_client_wait_connected).
/// On success stores the new client in `*client_out` (the caller owns it: push_client_close, then
/// push_client_free) and returns PUSH_OK; on failure stores NULL.
/// Errors: PUSH_E_INVALID_ARGUMENT (NULL config or client_out), PUSH_E_KEY (no or bad credentials),
/// PUSH_E_TLS (trust store or CA file unusable), PUSH_E_BAD_OPTION, PUSH_E_INTERNAL_ERROR.
/// `err` may be NULL. Thread-safe.
@c public func push_client_open(_ config: push_config_t?, _ client_out: UnsafeMutablePointer<push_client_t?>?,
                                _ err: UnsafeMutablePointer<push_error>?) -> Int32 {
    guard let out = client_out else { return report(err, .invalidArgument, "client_out is NULL") }
    out.pointee = nil
    guard let box = ConfigBox.from(config) else { return report(err, .invalidArgument, "config is NULL or not a push_config_t") }
    let configuration = box.lock.withLock { box.configuration }
    do throws(ClientError) {
        let client = try PushClientGroup(configuration: configuration)
        guard let handle = HandleRecord.make(ClientBox(client: client), tag: ClientBox.tag) else {
            client.close(drainMillis: 0)
            return report(err, .noMemory, "out of memory")
        }
        out.pointee = handle
        return succeed(err)
    } catch {
        return report(err, error.status, error.description)
    }
}

/// Waits until at least one connection to APNs is open, for up to `timeout_ms` milliseconds
/// (negative: no limit). Optional: sends don't need it, but it turns a misconfiguration into an
/// error at start-up instead of FAILED results.
/// Errors: PUSH_E_INVALID_ARGUMENT (NULL client), PUSH_E_TLS (certificate, host name or ALPN
/// failure: the message says which), PUSH_E_TIMEOUT (with the last connection error),
/// PUSH_E_CLOSED. `err` may be NULL. Thread-safe.
@c public func push_client_wait_connected(_ client: push_client_t?, _ timeout_ms: Int32,
                                          _ err: UnsafeMutablePointer<push_error>?) -> Int32 {
    guard let box = ClientBox.from(client) else { return report(err, .invalidArgument, "client is NULL or not a push_client_t") }
    if let e = box.client.waitUntilConnected(timeoutMillis: timeout_ms) { return report(err, e.status, e.description) }
    return succeed(err)
}

/// Sends one notification: validates it, copies it (the caller's memory may be reused at
/// once) and queues it; its outcome arrives later through push_client_poll. When the client
/// holds PUSH_OPT_QUEUE_CAPACITY notifications already, waits up to `timeout_ms` (0: return
/// PUSH_E_QUEUE_FULL at once; negative: wait without limit).
/// Errors: PUSH_E_INVALID_ARGUMENT (NULL client or notification), a validation error
/// (PUSH_E_BAD_DEVICE_TOKEN, PUSH_E_BAD_TOPIC, PUSH_E_BAD_PUSH_TYPE, PUSH_E_BAD_PRIORITY,
/// PUSH_E_BAD_PAYLOAD, PUSH_E_PAYLOAD_TOO_LARGE, PUSH_E_BAD_COLLAPSE_ID, PUSH_E_BAD_APNS_ID,
/// PUSH_E_BAD_EXPIRATION, PUSH_E_BAD_CHANNEL_ID for a broadcast), PUSH_E_QUEUE_FULL, PUSH_E_CLOSED. A notification refused with an
/// error gets no result. `err` may be NULL. Thread-safe.
@c public func push_client_send(_ client: push_client_t?, _ notification: UnsafePointer<push_notification>?,
                                _ timeout_ms: Int32, _ err: UnsafeMutablePointer<push_error>?) -> Int32 {
    guard let box = ClientBox.from(client) else { return report(err, .invalidArgument, "client is NULL or not a push_client_t") }
    guard let notification else { return report(err, .invalidArgument, "notification is NULL") }
    // One record is as long as its own struct_size says (a newer caller's may be longer).
    let r = box.client.send(notification, count: 1, timeoutMillis: timeout_ms, stride: NotificationRecord.stride(of: notification))
    if let e = r.error { return report(err, e.status, e.description) }
    return succeed(err)
}

/// Sends `count` notifications from an array in one call (one crossing for bindings, one lock
/// hand-off for the batch). Stops at the first notification that is invalid or does not fit:
/// `*accepted` (may be NULL) receives how many of the first ones were queued, and the return
/// value and `err` describe why the next one was not. Waiting for room as push_client_send.
/// Every record of the array has the first record's struct_size (0: PUSH_NOTIFICATION_SIZE_V1),
/// which is also the distance between records: programs built with an older header keep working.
/// Errors: as push_client_send; PUSH_E_INVALID_ARGUMENT also for a NULL array with count > 0,
/// a negative count, a count no array could hold, or a record whose struct_size is larger than
/// the first one's (read that far, it would run into the next record).
/// `err` may be NULL. Thread-safe.
@c public func push_client_send_batch(_ client: push_client_t?, _ notifications: UnsafePointer<push_notification>?,
                                      _ count: Int, _ timeout_ms: Int32, _ accepted: UnsafeMutablePointer<Int>?,
                                      _ err: UnsafeMutablePointer<push_error>?) -> Int32 {
    accepted?.pointee = 0
    guard let box = ClientBox.from(client) else { return report(err, .invalidArgument, "client is NULL or not a push_client_t") }
    guard count >= 0 else { return report(err, .invalidArgument, "count is negative") }
    guard count <= Int.max / MemoryLayout<push_notification>.stride else {
        return report(err, .invalidArgument, "count \(count) is larger than any array of push_notification")
    }
    if count == 0 { return succeed(err) }
    guard let notifications else { return report(err, .invalidArgument, "notifications is NULL") }
    // The caller's records may be an older, smaller version: walk them with its stride.
    let r = box.client.send(notifications, count: count, timeoutMillis: timeout_ms, stride: NotificationRecord.stride(of: notifications))
    accepted?.pointee = r.accepted
    if let e = r.error {
        return report(err, e.status, r.accepted > 0 || count > 1 ? "notification \(r.accepted): \(e.description)" : e.description)
    }
    return succeed(err)
}

/// Moves up to `max` outcomes into `results`, an array of records of `result_size` bytes each
/// (pass sizeof(push_result)), waiting up to `timeout_ms` for the first (0: don't wait;
/// negative: no limit). `*count` receives how many were written. Each notification accepted by
/// a send produces exactly one result, also after push_client_close (cancelled ones).
/// Returns PUSH_OK (possibly with *count == 0 after a timeout), or PUSH_E_CLOSED once the
/// client is closed and every result has been returned.
/// Errors: PUSH_E_INVALID_ARGUMENT (NULL client, results or count with max > 0, negative max,
/// result_size smaller than the first version of push_result or larger than 65536, or
/// max * result_size beyond the address space). Thread-safe; several threads may poll.
@c public func push_client_poll(_ client: push_client_t?, _ results: UnsafeMutablePointer<push_result>?,
                                _ max: Int, _ result_size: Int, _ timeout_ms: Int32,
                                _ count: UnsafeMutablePointer<Int>?) -> Int32 {
    count?.pointee = 0
    guard let box = ClientBox.from(client) else { return PushStatus.invalidArgument.rawValue }
    guard let count, max >= 0 else { return PushStatus.invalidArgument.rawValue }
    if max == 0 { return 0 }
    guard let results, result_size >= MemoryLayout<push_result>.size else { return PushStatus.invalidArgument.rawValue }
    // No version of push_result will be this large, and no array this long fits in memory:
    // such values are garbage (a dangling or swapped size), refused before anything is written.
    guard result_size <= maxRecordSize, max <= Int.max / result_size else { return PushStatus.invalidArgument.rawValue }
    let r = box.client.poll(into: UnsafeMutableRawPointer(results), max: max, recordSize: result_size, timeoutMillis: timeout_ms)
    count.pointee = r.count
    return r.allDelivered ? PushStatus.closed.rawValue : 0
}

/// Stores in `*fd` a file descriptor that is readable while results are waiting, for event
/// loops that wait on descriptors (epoll, libuv, asyncio's add_reader, Go's poller) instead of
/// in push_client_poll: when it is readable, call push_client_poll with timeout 0 until it
/// returns no results. It may be readable with none waiting (a poll then returns 0 results);
/// it is never quiet while results wait, and stays readable once the client has finished (poll
/// then returns PUSH_E_CLOSED). The library owns it: don't read, write or close it; it is
/// closed by push_client_free. Level-triggered use only (EPOLLET would miss results).
/// Errors: PUSH_E_INVALID_ARGUMENT (NULL client or fd, or results go to a result callback),
/// PUSH_E_INTERNAL (no descriptor could be made). `err` may be NULL. Thread-safe.
@c public func push_client_result_fd(_ client: push_client_t?, _ fd: UnsafeMutablePointer<Int32>?,
                                     _ err: UnsafeMutablePointer<push_error>?) -> Int32 {
    fd?.pointee = -1
    guard let box = ClientBox.from(client) else { return report(err, .invalidArgument, "client is NULL or not a push_client_t") }
    guard let fd else { return report(err, .invalidArgument, "fd is NULL") }
    do throws(ClientError) {
        fd.pointee = try box.client.resultFileDescriptor()
    } catch {
        return report(err, error.status, error.description)
    }
    return succeed(err)
}

/// Fills `*stats` with a snapshot of the client's counters (queued, in flight, unpolled,
/// sent, accepted, rejected, failed, retries, GOAWAYs, connections and each connection's stream
/// limit, last GOAWAY reason, last connection error, latency p50/p99). `stats_size` is the
/// caller's sizeof(push_stats); only that many bytes are written. Works after close too.
/// Errors: PUSH_E_INVALID_ARGUMENT (NULL client or stats, or stats_size too small for the first
/// version of push_stats). Thread-safe; cheap enough to call often (one lock, no I/O).
@c public func push_client_stats(_ client: push_client_t?, _ stats: UnsafeMutablePointer<push_stats>?,
                                 _ stats_size: Int) -> Int32 {
    guard let box = ClientBox.from(client), let stats else { return PushStatus.invalidArgument.rawValue }
    guard stats_size >= MemoryLayout<push_stats>.size else { return PushStatus.invalidArgument.rawValue }
    stats.pointee = box.client.stats()
    return 0
}

/// Writes the client's counters in the Prometheus text exposition format (version 0.0.4):
/// `swiftpush_notifications_total{outcome,reason}`, `swiftpush_writes_total`,
/// `swiftpush_retries_total`, `swiftpush_goaways_total`, `swiftpush_connections_started_total`,
/// the gauges `swiftpush_connections{state}`, `swiftpush_queued`, `swiftpush_in_flight`,
/// `swiftpush_unpolled`, and the histogram `swiftpush_answer_latency_seconds`, ready to serve
/// on a `/metrics` endpoint. NUL-terminated into `buffer` (`capacity` bytes; it needs
/// *out_length + 1), its length without the NUL into `*out_length`; with `buffer` NULL only
/// the length is set. Works after close too.
/// Errors: PUSH_E_INVALID_ARGUMENT (NULL client or out_length, negative capacity),
/// PUSH_E_BUFFER_TOO_SMALL (*out_length receives the length; nothing is written). `err` may
/// be NULL. Thread-safe.
@c public func push_client_metrics_text(_ client: push_client_t?, _ buffer: UnsafeMutablePointer<CChar>?, _ capacity: Int,
                                        _ out_length: UnsafeMutablePointer<Int>?,
                                        _ err: UnsafeMutablePointer<push_error>?) -> Int32 {
    out_length?.pointee = 0
    guard let box = ClientBox.from(client) else { return report(err, .invalidArgument, "client is NULL or not a push_client_t") }
    guard let out_length else { return report(err, .invalidArgument, "out_length is NULL") }
    guard capacity >= 0 else { return report(err, .invalidArgument, "capacity is negative") }
    return copyOut(Array(box.client.metricsText().utf8), buffer, capacity, out_length, err)
}

/// Closes a client: stops accepting notifications (later sends return PUSH_E_CLOSED), lets
/// notifications in flight finish for up to `drain_ms` milliseconds, then ends every remaining
/// one with a FAILED result (PUSH_REASON_CANCELLED if never sent, PUSH_REASON_CANCELLED_IN_FLIGHT
/// if APNs may have seen it), closes the connections and joins the I/O thread. Results remain
/// readable with push_client_poll until push_client_free. NULL, and closing twice, are accepted
/// (a second close waits for the first). Thread-safe. Returns PUSH_OK, or
/// PUSH_E_INVALID_ARGUMENT for a handle that is not a client, or when called from the client's
/// own result callback (its I/O thread cannot wait for itself; nothing is done).
@c public func push_client_close(_ client: push_client_t?, _ drain_ms: Int32) -> Int32 {
    guard let client else { return 0 }
    guard let box = ClientBox.from(client) else { return PushStatus.invalidArgument.rawValue }
    return box.client.close(drainMillis: drain_ms) ? 0 : PushStatus.invalidArgument.rawValue
}

/// Releases a client and every result not yet polled (closing it first, without draining, if
/// push_client_close was not called). NULL is accepted. The handle is invalid afterwards; no
/// other thread may be using it. Called from the client's own result callback it does nothing
/// (freeing the client under its running I/O thread would crash the host).
@c public func push_client_free(_ client: push_client_t?) {
    guard let client, let box = ClientBox.from(client) else { return }
    guard box.client.close(drainMillis: 0) else { return }
    HandleRecord.free(client)
}
