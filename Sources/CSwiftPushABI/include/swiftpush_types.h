/* The C types of libswiftpush's public ABI: handles, records, options and constants.
 *
 * This file and swiftpush_tables.h (generated from Tables/) are merged, together with the
 * functions that the Swift core exports with @c, into the one public header Include/swiftpush.h
 * by scripts/gen_header.py. Users include Include/swiftpush.h, never this file.
 *
 * Rules that keep the ABI easy to bind from C, Python (ctypes) and Go (cgo):
 * - only opaque handles, fixed-width integers, byte pointers with lengths and small fixed-layout
 *   structs cross the boundary; no unions, no varargs, no thread-local error state;
 * - records that may grow start with `struct_size`, so new fields go at the end;
 * - a (pointer, length) pair whose length is 0 is read as a NUL-terminated string, so C callers
 *   may set the pointer alone; a NULL pointer means "absent". */
#ifndef SWIFTPUSH_TYPES_H
#define SWIFTPUSH_TYPES_H

#include <stddef.h>
#include <stdint.h>

#include "swiftpush_tables.h"

/** Version of this header; push_version() returns the library's. */
#define PUSH_VERSION_MAJOR 0
#define PUSH_VERSION_MINOR 1
#define PUSH_VERSION_PATCH 0
#define PUSH_VERSION_STRING "0.1.0"

/** A client: a pool of TLS + HTTP/2 connections to one APNs host, its I/O thread, the submission
 *  queue and the results not yet polled. Created by push_client_open, ended by push_client_close
 *  and released by push_client_free. */
typedef struct push_client_s *push_client_t;

/** Configuration for push_client_open: created by push_config_new, set with push_config_set_*,
 *  released by push_config_free. A client copies what it needs; the configuration may be freed
 *  or reused as soon as push_client_open returns. */
typedef struct push_config_s *push_config_t;

/** Detailed error: the status code and a NUL-terminated message naming what was wrong. Every
 *  function that can fail takes an optional `push_error *` (NULL to ignore the detail). */
typedef struct push_error {
    int32_t code;       /**< the same PUSH_* status the function returned */
    char message[252];  /**< NUL-terminated, never contains key material */
} push_error;

/** Options for push_config_set_string / push_config_set_int. */
enum push_option {
    /** string: APNs host name (default "api.push.apple.com"). Also the TLS server name. */
    PUSH_OPT_HOST = 1,
    /** int: TCP port (default 443; APNs also listens on 2197). */
    PUSH_OPT_PORT = 2,
    /** string: PEM file of CA certificates to trust instead of the system trust store. */
    PUSH_OPT_CA_FILE = 3,
    /** string: path of the Apple token-signing key (.p8, PKCS#8 PEM, P-256). */
    PUSH_OPT_TOKEN_KEY_FILE = 4,
    /** string: the key's 10-character key id (JWT `kid`). */
    PUSH_OPT_KEY_ID = 5,
    /** string: the 10-character team id (JWT `iss`). */
    PUSH_OPT_TEAM_ID = 6,
    /** string: topic used when a notification names none (usually the app's bundle id). */
    PUSH_OPT_DEFAULT_TOPIC = 7,
    /** int: number of connections in the pool (default 1, 1..64). */
    PUSH_OPT_CONNECTIONS = 8,
    /** int: most concurrent streams per connection, whatever the server allows (default 1000). */
    PUSH_OPT_MAX_STREAMS = 9,
    /** int: notifications held at once: queued + in flight + results not yet polled
     *  (default 65536, 16..4194304). When all are used, send returns PUSH_E_QUEUE_FULL. */
    PUSH_OPT_QUEUE_CAPACITY = 10,
    /** int: milliseconds a notification may wait for its outcome, from send (default 60000). */
    PUSH_OPT_DEADLINE_MS = 11,
    /** int: milliseconds a connection attempt (TCP + TLS) may take (default 10000). */
    PUSH_OPT_CONNECT_TIMEOUT_MS = 12,
    /** string: PEM file with the token key, given as file contents instead of a path. */
    PUSH_OPT_TOKEN_KEY_PEM = 13
};

/** push_notification.flags */
enum push_notification_flags {
    /** push_notification.expiration is set (otherwise no apns-expiration header is sent). */
    PUSH_NOTIFICATION_HAS_EXPIRATION = 1
};

/** Outcome of a notification (push_result.outcome). Every notification accepted by a send gets
 *  exactly one result. */
enum push_outcome {
    PUSH_OUTCOME_ACCEPTED = 1, /**< APNs answered 200 */
    PUSH_OUTCOME_REJECTED = 2, /**< APNs answered with an error: see status and reason */
    PUSH_OUTCOME_FAILED = 3    /**< no answer: transport error, timeout or cancelled (see reason) */
};

/** A length of 0 in a (pointer, length) pair: the string is NUL-terminated. */
#define PUSH_NUL_TERMINATED 0

/** One notification to send. Zero-initialize it, set struct_size to sizeof(push_notification)
 *  (0 is read as this first version), then the fields you need. The library copies everything
 *  during the send call; the caller's memory may be reused as soon as it returns. */
typedef struct push_notification {
    uint32_t struct_size;       /**< sizeof(push_notification), or 0 */
    int32_t push_type;          /**< PUSH_TYPE_* (0 = alert) */
    int32_t priority;           /**< 10, 5 or 1; 0 = the push type's default */
    uint32_t flags;             /**< PUSH_NOTIFICATION_* */
    int64_t expiration;         /**< UNIX seconds with PUSH_NOTIFICATION_HAS_EXPIRATION; 0 = try once */
    uint64_t tag;               /**< the caller's value, echoed in the result */
    const char *device_token;   /**< hex device token (required) */
    size_t device_token_len;
    const char *topic;          /**< apns-topic; NULL = the client's default topic */
    size_t topic_len;
    const char *payload;        /**< UTF-8 JSON payload (required), sent as it is */
    size_t payload_len;
    const char *collapse_id;    /**< apns-collapse-id, at most 64 bytes; NULL = none */
    size_t collapse_id_len;
    const char *apns_id;        /**< lowercase canonical UUID; NULL = generated by the library */
    size_t apns_id_len;
} push_notification;

/** The outcome of one notification, filled by push_client_poll. */
typedef struct push_result {
    uint32_t struct_size;       /**< bytes of this record the library filled */
    int32_t outcome;            /**< PUSH_OUTCOME_* */
    int32_t status;             /**< HTTP status from APNs, 0 when there was no answer */
    int32_t reason;             /**< PUSH_REASON_* (PUSH_REASON_NONE when accepted) */
    uint64_t tag;               /**< push_notification.tag */
    int64_t timestamp_ms;       /**< 410 only: when APNs learned the token was invalid (ms since epoch) */
    int64_t latency_us;         /**< from send to outcome, microseconds */
    uint32_t attempts;          /**< how many times the request was written to a connection */
    uint32_t reserved;
    char apns_id[40];           /**< NUL-terminated apns-id (lowercase UUID) */
    char unique_id[40];         /**< NUL-terminated apns-unique-id (sandbox only), or "" */
    char reason_text[128];      /**< NUL-terminated: APNs's reason text, or the library's detail */
} push_result;

#endif
