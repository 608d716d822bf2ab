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
 *   may set the pointer alone; a NULL pointer means "absent".
 *
 * What the library can check, and what it cannot (Tests/c/bad_input.c tries each):
 * - checked: NULL for every pointer argument; negative lengths, counts and capacities; a
 *   size_t length of 2^63 or more; a length longer than any valid value (option strings:
 *   PATH_MAX, key PEM: 64 KiB, payload values: 5120, topics: 255, device tokens: 512 hex
 *   digits, payloads: the push type's limit, collapse ids: 64), refused before a byte is read;
 *   counts and record sizes whose product exceeds the address space; invalid UTF-8; a handle of
 *   another kind (a push_config_t passed as a push_client_t, ...), recognized by a tag in the
 *   object it points to, and a freed handle as long as its memory has not been reused.
 * - not checkable: a length that is within the limits but larger than the caller's buffer (the
 *   library cannot know a buffer's size: it reads that many bytes); a NUL-terminated string
 *   without its NUL; an array shorter than its count (push_client_send_batch,
 *   push_client_poll); a pointer that is not NULL but not valid either, including a "handle"
 *   that points to fewer than 8 readable bytes; a freed handle whose memory was reused. Such
 *   calls are undefined behaviour, as with any C library. */
#ifndef SWIFTPUSH_TYPES_H
#define SWIFTPUSH_TYPES_H

#include <stddef.h>
#include <stdint.h>

#include "swiftpush_tables.h"

/** Version of this header; push_version() returns the library's. */
#define PUSH_VERSION_MAJOR 0
#define PUSH_VERSION_MINOR 2
#define PUSH_VERSION_PATCH 0
#define PUSH_VERSION_STRING "0.2.0"

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

/* enum push_option (PUSH_OPT_*) is generated from Tables/options.tsv into swiftpush_tables.h. */

/** Values of PUSH_OPT_ENVIRONMENT. */
enum push_environment {
    PUSH_ENV_PRODUCTION = 0, /**< api.push.apple.com */
    PUSH_ENV_SANDBOX = 1     /**< api.sandbox.push.apple.com (development builds of apps) */
};

/** Apple's APNs host names (ports 443 and 2197 both work). */
#define PUSH_HOST_PRODUCTION "api.push.apple.com"
#define PUSH_HOST_SANDBOX "api.sandbox.push.apple.com"

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
 *  (0 is read as the first version, PUSH_NOTIFICATION_SIZE_V1), then the fields you need. The library copies everything
 *  during the send call; the caller's memory may be reused as soon as it returns. */
typedef struct push_notification {
    uint32_t struct_size;       /**< sizeof(push_notification); 0 (programs built before 0.2) means PUSH_NOTIFICATION_SIZE_V1 */
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
    const char *apns_id;        /**< lowercase canonical UUID; NULL = generated by the library
                                     (sent as apns-request-id on a broadcast) */
    size_t apns_id_len;
    /* Added with broadcast push (read only when struct_size covers them; see push_client_send_batch). */
    const char *channel_id;     /**< a broadcast: the channel id (base64, as push_channel_create
                                     returned it); NULL = a device notification. A broadcast
                                     goes to POST /4/broadcasts/apps/<topic>, so `topic` (or the
                                     default topic) is the app's bundle id without suffix;
                                     push_type must be PUSH_TYPE_LIVEACTIVITY, flags must have
                                     PUSH_NOTIFICATION_HAS_EXPIRATION (expiration 0 on a channel
                                     that stores no message), device_token and collapse_id must
                                     be NULL; priority 0 means 10; payload at most 5120 bytes.
                                     Its result's apns_id is the apns-request-id. */
    size_t channel_id_len;
    /* Added with per-notification deadlines (read only when struct_size covers it). */
    int64_t deadline_ms;        /**< how long this notification may take from its send to its
                                     outcome, in milliseconds; past it, it ends FAILED
                                     (PUSH_REASON_QUEUE_TIMEOUT if never sent, PUSH_REASON_TIMEOUT
                                     if sent and unanswered). 0 = the client's PUSH_OPT_DEADLINE_MS
                                     (as every record of an older version); negative is refused. */
} push_notification;

/** The size of the first version of push_notification (without channel_id): what a
 *  struct_size of 0 means. */
#define PUSH_NOTIFICATION_SIZE_V1 offsetof(push_notification, channel_id)
/** The size of the second version (with channel_id, without deadline_ms): its records take
 *  the client's deadline. */
#define PUSH_NOTIFICATION_SIZE_V2 offsetof(push_notification, deadline_ms)

/** The outcome of one notification, filled by push_client_poll. */
typedef struct push_result {
    uint32_t struct_size;       /**< bytes of this record the library filled */
    int32_t outcome;            /**< PUSH_OUTCOME_* */
    int32_t status;             /**< HTTP status from APNs, 0 when there was no answer */
    int32_t reason;             /**< PUSH_REASON_* (PUSH_REASON_NONE when accepted) */
    uint64_t tag;               /**< push_notification.tag */
    int64_t timestamp_ms;       /**< 410 only: when APNs learned the token was invalid (ms since epoch) */
    int64_t latency_us;         /**< from send to outcome, microseconds */
    uint32_t attempts;          /**< attempts that may have reached APNs (writes the server never
                                     processed are not counted; push_stats.sent counts every write) */
    uint32_t reserved;
    char apns_id[40];           /**< NUL-terminated apns-id (lowercase UUID); a broadcast's apns-request-id */
    char unique_id[40];         /**< NUL-terminated apns-unique-id (sandbox only), or "" */
    char reason_text[128];      /**< NUL-terminated: APNs's reason text, or the library's detail */
} push_result;

/** Receives results instead of push_client_poll (see push_config_set_result_callback): called
 *  on the client's I/O thread with `count` (>= 1) results, valid only during the call. */
typedef void (*push_result_callback)(void *user_data, const push_result *results, ptrdiff_t count);

/** Severity of a log event (push_config_set_log_callback); the values are Python logging's. */
enum push_log_level {
    PUSH_LOG_DEBUG = 10,   /**< detail: each connection attempt and its address */
    PUSH_LOG_INFO = 20,    /**< connections ready, closed and retired; provider tokens signed */
    PUSH_LOG_WARNING = 30, /**< refusals and the reconnect back-off they cause; slow callbacks */
    PUSH_LOG_ERROR = 40    /**< TLS failures, HTTP/2 protocol errors */
};

/** Receives log events (see push_config_set_log_callback), on the client's I/O thread(s):
 *  `level` is a PUSH_LOG_* value, `event` a stable dotted name ("connection.ready"), `message`
 *  a sentence for people; both strings are valid only during the call. */
typedef void (*push_log_callback)(void *user_data, int32_t level, const char *event, const char *message);

/** The state of one connection of the pool (push_connection_stats.state). */
enum push_connection_state {
    PUSH_CONNECTION_CONNECTING = 1, /**< TCP, proxy tunnel or TLS handshake in progress */
    PUSH_CONNECTION_READY = 2,      /**< carrying notifications */
    PUSH_CONNECTION_DRAINING = 3    /**< GOAWAY received or retired: finishing its streams */
};

/** One connection, as seen by push_client_stats. */
typedef struct push_connection_stats {
    int32_t state;          /**< PUSH_CONNECTION_* */
    int32_t stream_limit;   /**< streams it may carry now: min(server's limit, PUSH_OPT_MAX_STREAMS) */
    int32_t in_flight;      /**< streams open now */
    int32_t reserved;
} push_connection_stats;

/** A snapshot of a client's counters, filled by push_client_stats. */
typedef struct push_stats {
    uint32_t struct_size;         /**< bytes of this record the library filled */
    uint32_t connection_count;    /**< entries filled in connections[] */
    uint64_t queued;              /**< accepted by send, not yet written to a connection */
    uint64_t in_flight;           /**< written, waiting for the answer */
    uint64_t unpolled;            /**< results waiting for push_client_poll */
    uint64_t sent;                /**< requests written (every attempt counts) */
    uint64_t accepted;            /**< results: ACCEPTED */
    uint64_t rejected;            /**< results: REJECTED */
    uint64_t failed;              /**< results: FAILED */
    uint64_t retries;             /**< notifications sent again (REFUSED_STREAM, GOAWAY, 429, 5xx, expired token) */
    uint64_t goaways;             /**< GOAWAY frames received */
    uint64_t connections_started; /**< connection attempts since open */
    uint32_t connections_open;    /**< connections carrying notifications now */
    uint32_t connections_opening; /**< connections being set up now */
    int64_t latency_p50_us;       /**< send -> answer, over answered notifications since open */
    int64_t latency_p99_us;
    char last_goaway_reason[64];  /**< NUL-terminated reason of the last GOAWAY, or "" */
    char last_connection_error[128]; /**< NUL-terminated, or "" */
    push_connection_stats connections[64]; /**< the pool and the connections draining */
} push_stats;

/** A notification payload being built: created by push_payload_new, filled with the
 *  push_payload_set_* functions, turned into JSON by push_payload_build and released by
 *  push_payload_free. Building is optional: push_notification.payload takes any JSON object. */
typedef struct push_payload_s *push_payload_t;

/** The fields of a payload (Apple: "Generating a remote notification"), grouped by the setter
 *  that takes them. Alert fields go into aps.alert, the others into aps. */
enum push_payload_field {
    /* Strings, push_payload_set_string (a NULL value removes the field). */
    PUSH_PAYLOAD_ALERT_TITLE = 1,            /**< aps.alert.title */
    PUSH_PAYLOAD_ALERT_SUBTITLE = 2,         /**< aps.alert.subtitle */
    PUSH_PAYLOAD_ALERT_BODY = 3,             /**< aps.alert.body */
    PUSH_PAYLOAD_ALERT_LAUNCH_IMAGE = 4,     /**< aps.alert.launch-image */
    PUSH_PAYLOAD_ALERT_TITLE_LOC_KEY = 5,    /**< aps.alert.title-loc-key */
    PUSH_PAYLOAD_ALERT_SUBTITLE_LOC_KEY = 6, /**< aps.alert.subtitle-loc-key */
    PUSH_PAYLOAD_ALERT_LOC_KEY = 7,          /**< aps.alert.loc-key */
    PUSH_PAYLOAD_SOUND = 8,                  /**< aps.sound, a sound name (see push_payload_set_critical_sound) */
    PUSH_PAYLOAD_THREAD_ID = 9,              /**< aps.thread-id */
    PUSH_PAYLOAD_CATEGORY = 10,              /**< aps.category */
    PUSH_PAYLOAD_TARGET_CONTENT_ID = 11,     /**< aps.target-content-id */
    PUSH_PAYLOAD_INTERRUPTION_LEVEL = 12,    /**< aps.interruption-level: passive, active, time-sensitive or critical */
    PUSH_PAYLOAD_FILTER_CRITERIA = 13,       /**< aps.filter-criteria */
    PUSH_PAYLOAD_EVENT = 14,                 /**< aps.event (Live Activity): start, update or end */
    PUSH_PAYLOAD_ATTRIBUTES_TYPE = 15,       /**< aps.attributes-type (Live Activity start) */
    PUSH_PAYLOAD_INPUT_PUSH_CHANNEL = 16,    /**< aps.input-push-channel (iOS 18, Live Activity start): the
                                                  channel id (base64) the new activity subscribes to */
    /* String lists, push_payload_add_loc_arg (one argument per call). */
    PUSH_PAYLOAD_ALERT_TITLE_LOC_ARGS = 20,    /**< aps.alert.title-loc-args (needs the title loc key) */
    PUSH_PAYLOAD_ALERT_SUBTITLE_LOC_ARGS = 21, /**< aps.alert.subtitle-loc-args (needs the subtitle loc key) */
    PUSH_PAYLOAD_ALERT_LOC_ARGS = 22,          /**< aps.alert.loc-args (needs the loc key) */
    /* Integers, push_payload_set_int. */
    PUSH_PAYLOAD_BADGE = 30,             /**< aps.badge, 0 or more (0 removes the app's badge) */
    PUSH_PAYLOAD_CONTENT_AVAILABLE = 31, /**< aps.content-available: 1, or 0 for absent */
    PUSH_PAYLOAD_MUTABLE_CONTENT = 32,   /**< aps.mutable-content: 1, or 0 for absent */
    PUSH_PAYLOAD_TIMESTAMP = 33,         /**< aps.timestamp (Live Activity), UNIX seconds */
    PUSH_PAYLOAD_STALE_DATE = 34,        /**< aps.stale-date (Live Activity), UNIX seconds */
    PUSH_PAYLOAD_DISMISSAL_DATE = 35,    /**< aps.dismissal-date (Live Activity), UNIX seconds */
    PUSH_PAYLOAD_PUSH_TYPE = 36,         /**< not a key: the PUSH_TYPE_* whose size limit push_payload_build
                                              enforces (default PUSH_TYPE_ALERT: 4096 bytes; voip 5120) */
    PUSH_PAYLOAD_INPUT_PUSH_TOKEN = 37,  /**< aps.input-push-token (iOS 18, Live Activity start): 1, or 0 for
                                              absent; the new activity reports its own update token */
    /* Numbers, push_payload_set_double. */
    PUSH_PAYLOAD_RELEVANCE_SCORE = 40,   /**< aps.relevance-score, 0 to 1 */
    /* Raw JSON objects, push_payload_set_raw (copied as they are). */
    PUSH_PAYLOAD_CONTENT_STATE = 50,     /**< aps.content-state (Live Activity) */
    PUSH_PAYLOAD_ATTRIBUTES = 51         /**< aps.attributes (Live Activity start) */
};

/** A connection to APNs's channel management host (broadcast push, iOS 18): created by
 *  push_channels_open, used by the push_channel_* calls, released by push_channels_free. */
typedef struct push_channels_s *push_channels_t;

/** Apple's channel management hosts (production port 2196, sandbox port 2195). */
#define PUSH_CHANNELS_HOST_PRODUCTION "api-manage-broadcast.push.apple.com"
#define PUSH_CHANNELS_HOST_SANDBOX "api-manage-broadcast.sandbox.push.apple.com"

/** Values of a channel's message storage policy (fixed when the channel is created). */
enum push_channel_storage {
    PUSH_CHANNEL_NO_MESSAGE_STORED = 0,         /**< higher publishing budget; expiration must be 0 */
    PUSH_CHANNEL_MOST_RECENT_MESSAGE_STORED = 1 /**< the last broadcast is kept (up to 8 hours) */
};

/** The room push_channel_create needs for a channel id and its NUL. Apple does not fix the
 *  size of channel ids (today 24 characters); the library refuses ids longer than 256 bytes. */
#define PUSH_CHANNEL_ID_CAPACITY 257

/** What APNs answered to a channel management call. Zero it and set struct_size to
 *  sizeof(push_channel_result) (0 is read as this version). */
typedef struct push_channel_result {
    uint32_t struct_size;       /**< bytes of this record the library filled */
    int32_t status;             /**< HTTP status (201/200/204 on success), 0 when there was no answer */
    int32_t reason;             /**< PUSH_REASON_* (PUSH_REASON_NONE on success) */
    int32_t storage_policy;     /**< push_channel_read: PUSH_CHANNEL_*; -1 otherwise */
    char request_id[40];        /**< NUL-terminated apns-request-id of the answer, or "" */
    char reason_text[128];      /**< NUL-terminated: APNs's reason text, or "" */
} push_channel_result;

/** The channel ids of an app, returned by push_channel_list. The library allocates it (the
 *  array and the strings in one block); the caller owns it and releases it, once, with
 *  push_channel_ids_free. */
typedef struct push_channel_ids {
    size_t count;               /**< number of ids */
    const char *const *ids;     /**< `count` NUL-terminated base64 channel ids, oldest first */
} push_channel_ids;

#endif
