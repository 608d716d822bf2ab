/* End-to-end tests of broadcast push through the C ABI: channel management (push_channels_*,
 * push_channel_*) on the mock's channel management listener, and broadcasts (push_notification
 * with channel_id) on its APNs listener, over real TLS + HTTP/2 on loopback.
 * Started by Tests/c/run.sh, which passes in the environment:
 *   SWIFTPUSH_TEST_PORT          the mock's APNs port
 *   SWIFTPUSH_TEST_CHANNEL_PORT  the same mock's channel management port (at most 3 channels per
 *                                app; com.example.disabled has no broadcast push)
 *   SWIFTPUSH_TEST_PKI           the directory made by scripts/make-test-pki.sh
 * Prints one line per test and "N passed, N failed" at the end. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "swiftpush.h"
#include "test_support.h"

static const char *pki;
static long port, channel_port;
static const char *bundle = "com.example.app";
static const char *update = "{\"aps\":{\"timestamp\":1700000000,\"event\":\"update\",\"content-state\":{\"score\":\"2-1\"}}}";

static push_config_t config(void) {
    char file[512];
    push_error err;
    push_config_t cfg = push_config_new();
    push_config_set_string(cfg, PUSH_OPT_HOST, "localhost", 0, &err);
    push_config_set_int(cfg, PUSH_OPT_PORT, port, &err);
    snprintf(file, sizeof file, "%s/ca.pem", pki);
    push_config_set_string(cfg, PUSH_OPT_CA_FILE, file, 0, &err);
    snprintf(file, sizeof file, "%s/AuthKey_TESTKEY001.p8", pki);
    push_config_set_string(cfg, PUSH_OPT_TOKEN_KEY_FILE, file, 0, &err);
    push_config_set_string(cfg, PUSH_OPT_KEY_ID, "TESTKEY001", 0, &err);
    push_config_set_string(cfg, PUSH_OPT_TEAM_ID, "TEAM123456", 0, &err);
    push_config_set_string(cfg, PUSH_OPT_DEFAULT_TOPIC, bundle, 0, &err);
    return cfg;
}

static push_channels_t open_channels(void) {
    push_error err;
    push_config_t cfg = config();
    push_channels_t ch = NULL;
    if (push_channels_open(cfg, "localhost", 0, (int32_t)channel_port, &ch, &err) != PUSH_OK)
        printf("    push_channels_open: %s\n", err.message);
    push_config_free(cfg);
    return ch;
}

static push_client_t open_client(void) {
    push_error err;
    push_config_t cfg = config();
    push_client_t client = NULL;
    if (push_client_open(cfg, &client, &err) != PUSH_OK) printf("    push_client_open: %s\n", err.message);
    push_config_free(cfg);
    return client;
}

/* A broadcast of `payload` to `channel` (the client's default topic is the bundle id). */
static push_notification broadcast(const char *channel, int64_t expiration, uint64_t tag) {
    push_notification n;
    memset(&n, 0, sizeof n);
    n.struct_size = sizeof n;
    n.push_type = PUSH_TYPE_LIVEACTIVITY;
    n.flags = PUSH_NOTIFICATION_HAS_EXPIRATION;
    n.expiration = expiration;
    n.payload = update;
    n.channel_id = channel;
    n.tag = tag;
    return n;
}

/* Sends one notification and waits for its result. */
static int32_t send_one(push_client_t client, const push_notification *n, push_result *r, push_error *err) {
    int32_t rc = push_client_send(client, n, 1000, err);
    if (rc != PUSH_OK) return rc;
    ptrdiff_t got = 0;
    rc = push_client_poll(client, r, 1, sizeof *r, 10000, &got);
    return rc == PUSH_OK && got == 1 ? PUSH_OK : PUSH_E_TIMEOUT;
}

static int32_t create(push_channels_t ch, const char *app, int32_t policy, char id[PUSH_CHANNEL_ID_CAPACITY],
                      push_channel_result *result, push_error *err) {
    memset(result, 0, sizeof *result);
    result->struct_size = sizeof *result;
    ptrdiff_t len = 0;
    return push_channel_create(ch, app, 0, policy, id, PUSH_CHANNEL_ID_CAPACITY, &len, result, 5000, err);
}

static void test_create_broadcast_read_delete_then_ChannelNotRegistered(void) {
    int ok = 1;
    push_error err;
    push_channel_result result;
    char id[PUSH_CHANNEL_ID_CAPACITY];
    push_channels_t ch = open_channels();
    push_client_t client = open_client();
    EXPECT(ch && client, "handles");
    if (!ch || !client) { report(__func__, 0); return; }

    int32_t rc = create(ch, bundle, PUSH_CHANNEL_MOST_RECENT_MESSAGE_STORED, id, &result, &err);
    EXPECT(rc == PUSH_OK, "create: %s", err.message);
    EXPECT(result.status == 201 && result.reason == PUSH_REASON_NONE, "create answered %d %s", result.status, result.reason_text);
    EXPECT(strlen(result.request_id) == 36, "create request id '%s'", result.request_id);
    EXPECT(strlen(id) > 0 && strlen(id) % 4 == 0, "channel id '%s'", id);

    int32_t policy = -1;
    memset(&result, 0, sizeof result);
    rc = push_channel_read(ch, bundle, 0, id, 0, &policy, &result, 5000, &err);
    EXPECT(rc == PUSH_OK && policy == PUSH_CHANNEL_MOST_RECENT_MESSAGE_STORED && result.storage_policy == policy,
           "read: rc %d policy %d (%s)", rc, policy, err.message);

    push_notification n = broadcast(id, 1900000000, 7);
    n.apns_id = "8F3C1E3A-5B7D-4C2E-9A1B-0D2E3F4A5B6C";
    push_result r;
    rc = send_one(client, &n, &r, &err);
    EXPECT(rc == PUSH_OK, "send: %s", err.message);
    EXPECT(r.outcome == PUSH_OUTCOME_ACCEPTED && r.status == 200 && r.tag == 7, "broadcast: outcome %d status %d %s",
           r.outcome, r.status, r.reason_text);
    EXPECT(strcmp(r.apns_id, "8f3c1e3a-5b7d-4c2e-9a1b-0d2e3f4a5b6c") == 0, "apns-request-id echoed: '%s'", r.apns_id);
    EXPECT(strlen(r.unique_id) == 36, "apns-unique-id '%s'", r.unique_id);

    push_channel_ids *list = NULL;
    rc = push_channel_list(ch, bundle, 0, &list, NULL, 5000, &err);
    EXPECT(rc == PUSH_OK && list != NULL, "list: %s", err.message);
    int listed = 0;
    for (size_t i = 0; list && i < list->count; i++) listed += strcmp(list->ids[i], id) == 0;
    EXPECT(listed == 1, "the new channel is listed once");
    push_channel_ids_free(list);

    memset(&result, 0, sizeof result);
    rc = push_channel_delete(ch, bundle, 0, id, 0, &result, 5000, &err);
    EXPECT(rc == PUSH_OK && result.status == 204, "delete: rc %d status %d %s", rc, result.status, err.message);

    n = broadcast(id, 1900000000, 8);
    rc = send_one(client, &n, &r, &err);
    EXPECT(rc == PUSH_OK && r.outcome == PUSH_OUTCOME_REJECTED && r.status == 400 &&
           r.reason == PUSH_REASON_CHANNEL_NOT_REGISTERED, "after delete: outcome %d status %d %s", r.outcome, r.status,
           push_reason_name(r.reason));
    EXPECT(strlen(r.apns_id) == 36, "a rejected broadcast has its request id too");

    rc = push_channel_read(ch, bundle, 0, id, 0, &policy, &result, 5000, &err);
    EXPECT(rc == PUSH_E_REJECTED && result.reason == PUSH_REASON_CHANNEL_NOT_REGISTERED && policy == -1,
           "read after delete: rc %d %s", rc, push_reason_name(result.reason));
    rc = push_channel_delete(ch, bundle, 0, id, 0, &result, 5000, &err);
    EXPECT(rc == PUSH_E_REJECTED && result.reason == PUSH_REASON_CHANNEL_NOT_REGISTERED, "second delete: rc %d", rc);

    push_client_close(client, 1000);
    push_client_free(client);
    push_channels_free(ch);
    report(__func__, ok);
}

static void test_apns_refusals_of_channels_and_broadcasts(void) {
    int ok = 1;
    push_error err;
    push_channel_result result;
    char stored[PUSH_CHANNEL_ID_CAPACITY], id[PUSH_CHANNEL_ID_CAPACITY];
    push_channels_t ch = open_channels();
    push_client_t client = open_client();
    EXPECT(ch && client, "handles");
    if (!ch || !client) { report(__func__, 0); return; }
    push_result r;

    /* No Message Stored: the expiration must be 0. */
    EXPECT(create(ch, bundle, PUSH_CHANNEL_NO_MESSAGE_STORED, stored, &result, &err) == PUSH_OK, "create: %s", err.message);
    push_notification n = broadcast(stored, 1900000000, 1);
    EXPECT(send_one(client, &n, &r, &err) == PUSH_OK && r.reason == PUSH_REASON_BAD_EXPIRATION_DATE && r.status == 400,
           "expiration on a no-storage channel: %s", push_reason_name(r.reason));
    n = broadcast(stored, 0, 2);
    EXPECT(send_one(client, &n, &r, &err) == PUSH_OK && r.outcome == PUSH_OUTCOME_ACCEPTED, "expiration 0: %s",
           push_reason_name(r.reason));

    /* A payload over 4,096 bytes (the device limit) but within the broadcast limit of 5,120. */
    static char big[5120 + 2];
    memset(big, ' ', sizeof big);
    memcpy(big, "{\"aps\":{\"event\":\"update\"}", 25);
    big[5119] = '}';
    big[5120] = 0;
    n = broadcast(stored, 0, 3);
    n.payload = big;
    EXPECT(send_one(client, &n, &r, &err) == PUSH_OK && r.outcome == PUSH_OUTCOME_ACCEPTED, "5,120-byte payload: %s %s",
           err.message, push_reason_name(r.reason));

    /* Another app's channel. */
    n = broadcast(stored, 0, 4);
    n.topic = "com.example.other";
    EXPECT(send_one(client, &n, &r, &err) == PUSH_OK && r.reason == PUSH_REASON_TOPIC_MISMATCH && r.status == 403,
           "another app's channel: %s", push_reason_name(r.reason));

    /* An app without broadcast push. */
    EXPECT(create(ch, "com.example.disabled", 0, id, &result, &err) == PUSH_E_REJECTED &&
           result.reason == PUSH_REASON_FEATURE_NOT_ENABLED && result.status == 400,
           "create for a disabled app: %s", push_reason_name(result.reason));
    n = broadcast(stored, 0, 5);
    n.topic = "com.example.disabled";
    EXPECT(send_one(client, &n, &r, &err) == PUSH_OK && r.reason == PUSH_REASON_FEATURE_NOT_ENABLED,
           "broadcast for a disabled app: %s", push_reason_name(r.reason));

    /* The per-app channel limit (3 on this mock, 10,000 at Apple). */
    int created = 0;
    for (int i = 0; i < 3; i++) created += create(ch, "com.example.limited", 1, id, &result, &err) == PUSH_OK;
    EXPECT(created == 3, "three channels created");
    EXPECT(create(ch, "com.example.limited", 1, id, &result, &err) == PUSH_E_REJECTED &&
           result.reason == PUSH_REASON_CANNOT_CREATE_CHANNEL_CONFIG, "fourth: %s", push_reason_name(result.reason));

    /* A well-formed id APNs never issued. */
    n = broadcast("AAAAAAAAAAAAAAAAAAAAAA==", 0, 6);
    EXPECT(send_one(client, &n, &r, &err) == PUSH_OK && r.reason == PUSH_REASON_CHANNEL_NOT_REGISTERED,
           "unknown channel: %s", push_reason_name(r.reason));
    int32_t policy;
    EXPECT(push_channel_read(ch, bundle, 0, "AAAAAAAAAAAAAAAAAAAAAA==", 0, &policy, &result, 5000, &err) == PUSH_E_REJECTED &&
           result.reason == PUSH_REASON_CHANNEL_NOT_REGISTERED, "read unknown: %s", push_reason_name(result.reason));

    push_client_close(client, 1000);
    push_client_free(client);
    push_channels_free(ch);
    report(__func__, ok);
}

static void test_broadcasts_are_checked_before_sending(void) {
    int ok = 1;
    push_error err;
    push_client_t client = open_client();
    EXPECT(client != NULL, "client");
    if (!client) { report(__func__, 0); return; }
    const char *id = "dHN0LXNyY2gtY2hubA==";
    push_notification n = broadcast(id, 0, 1);
    n.flags = 0;
    EXPECT(push_client_send(client, &n, 0, &err) == PUSH_E_BAD_EXPIRATION, "no expiration: %s", err.message);
    n = broadcast("not base64!", 0, 1);
    EXPECT(push_client_send(client, &n, 0, &err) == PUSH_E_BAD_CHANNEL_ID, "bad id: %s", err.message);
    n = broadcast("", 0, 1);
    EXPECT(push_client_send(client, &n, 0, &err) == PUSH_E_BAD_CHANNEL_ID, "empty id: %s", err.message);
    n = broadcast(id, 0, 1);
    n.push_type = PUSH_TYPE_ALERT;
    EXPECT(push_client_send(client, &n, 0, &err) == PUSH_E_BAD_PUSH_TYPE, "alert: %s", err.message);
    n = broadcast(id, 0, 1);
    n.device_token = "00fc13adff785122b4ad28809a3420982341241421348097878e577c991de8f0";
    EXPECT(push_client_send(client, &n, 0, &err) == PUSH_E_BAD_DEVICE_TOKEN, "token: %s", err.message);
    n = broadcast(id, 0, 1);
    n.collapse_id = "x";
    EXPECT(push_client_send(client, &n, 0, &err) == PUSH_E_BAD_COLLAPSE_ID, "collapse id: %s", err.message);
    n = broadcast(id, 0, 1);
    n.topic = "com.example.app.push-type.liveactivity";
    EXPECT(push_client_send(client, &n, 0, &err) == PUSH_E_BAD_TOPIC, "suffixed topic: %s", err.message);
    n = broadcast(id, 0, 1);
    n.priority = 7;
    EXPECT(push_client_send(client, &n, 0, &err) == PUSH_E_BAD_PRIORITY, "priority 7: %s", err.message);
    static char big[5122];
    memset(big, ' ', sizeof big);
    memcpy(big, "{}", 2);
    big[5121] = 0;
    n = broadcast(id, 0, 1);
    n.payload = big;
    EXPECT(push_client_send(client, &n, 0, &err) == PUSH_E_PAYLOAD_TOO_LARGE, "5,121 bytes: %s", err.message);
    push_client_close(client, 0);
    ptrdiff_t got = 0;
    push_result r;
    EXPECT(push_client_poll(client, &r, 1, sizeof r, 0, &got) == PUSH_E_CLOSED && got == 0, "refused sends have no result");
    push_client_free(client);
    report(__func__, ok);
}

static void test_ten_thousand_broadcasts_to_one_channel_each_get_one_result(void) {
    int ok = 1;
    enum { COUNT = 10000, BATCH = 256 };
    push_error err;
    push_channel_result result;
    char id[PUSH_CHANNEL_ID_CAPACITY];
    push_channels_t ch = open_channels();
    push_client_t client = open_client();
    EXPECT(ch && client, "handles");
    if (!ch || !client) { report(__func__, 0); return; }
    EXPECT(create(ch, bundle, PUSH_CHANNEL_NO_MESSAGE_STORED, id, &result, &err) == PUSH_OK, "create: %s", err.message);
    unsigned char *seen = calloc(COUNT, 1);
    static push_notification batch[BATCH];
    static push_result results[BATCH];
    long sent = 0, received = 0, accepted = 0, duplicates = 0;
    while (received < COUNT) {
        if (sent < COUNT) {
            long n = COUNT - sent < BATCH ? COUNT - sent : BATCH;
            for (long i = 0; i < n; i++) batch[i] = broadcast(id, 0, (uint64_t)(sent + i));
            ptrdiff_t took = 0;
            int32_t rc = push_client_send_batch(client, batch, n, 1000, &took, &err);
            EXPECT(rc == PUSH_OK || rc == PUSH_E_QUEUE_FULL, "send: %s", err.message);
            if (rc != PUSH_OK && rc != PUSH_E_QUEUE_FULL) break;
            sent += took;
        }
        ptrdiff_t got = 0;
        push_client_poll(client, results, BATCH, sizeof(push_result), sent == COUNT ? 5000 : 0, &got);
        if (sent == COUNT && got == 0) break;
        for (ptrdiff_t i = 0; i < got; i++) {
            uint64_t tag = results[i].tag;
            if (tag >= COUNT || seen[tag]) { duplicates++; continue; }
            seen[tag] = 1;
            accepted += results[i].outcome == PUSH_OUTCOME_ACCEPTED && strlen(results[i].unique_id) == 36;
        }
        received += got;
    }
    EXPECT(sent == COUNT && received == COUNT && accepted == COUNT && duplicates == 0,
           "sent %ld received %ld accepted %ld duplicates %ld", sent, received, accepted, duplicates);
    push_client_close(client, 1000);
    push_client_free(client);
    push_channels_free(ch);
    free(seen);
    report(__func__, ok);
}

/* Writes device notification `i` (tag i) into `array` at the first header's stride,
 * PUSH_NOTIFICATION_SIZE_V1, claiming `struct_size` (what a program built against some header
 * would put there). */
static void put_v1_record(unsigned char *array, int i, uint32_t struct_size, int64_t expiration) {
    push_notification n;
    memset(&n, 0, sizeof n);
    n.struct_size = struct_size;
    n.device_token = "00fc13adff785122b4ad28809a3420982341241421348097878e577c991de8f0";
    n.payload = "{\"aps\":{\"alert\":\"v1\"}}";
    n.expiration = expiration;
    n.tag = (uint64_t)i;
    memcpy(array + (size_t)i * PUSH_NOTIFICATION_SIZE_V1, &n, PUSH_NOTIFICATION_SIZE_V1);
}

/* A program built against the first header: records of PUSH_NOTIFICATION_SIZE_V1 bytes, in an
 * array with that stride. */
static void test_records_of_the_first_version_still_send(void) {
    int ok = 1;
    enum { COUNT = 3 };
    push_error err;
    push_client_t client = open_client();
    EXPECT(client != NULL, "client");
    if (!client) { report(__func__, 0); return; }
    unsigned char *array = calloc(COUNT, PUSH_NOTIFICATION_SIZE_V1);
    for (int i = 0; i < COUNT; i++) /* 0 reads as the first version */
        put_v1_record(array, i, i == 0 ? 0 : (uint32_t)PUSH_NOTIFICATION_SIZE_V1, 0);
    ptrdiff_t took = 0;
    int32_t rc = push_client_send_batch(client, (const push_notification *)(void *)array, COUNT, 1000, &took, &err);
    EXPECT(rc == PUSH_OK && took == COUNT, "send: %s", err.message);
    push_result r[COUNT];
    ptrdiff_t got = 0, total = 0;
    while (total < COUNT && push_client_poll(client, r + total, COUNT - total, sizeof r[0], 5000, &got) == PUSH_OK && got > 0)
        total += got;
    int accepted = 0;
    for (ptrdiff_t i = 0; i < total; i++) accepted += r[i].outcome == PUSH_OUTCOME_ACCEPTED;
    EXPECT(total == COUNT && accepted == COUNT, "results %ld accepted %d", (long)total, accepted);
    push_client_close(client, 1000);
    push_client_free(client);
    free(array);
    report(__func__, ok);
}

/* A batch led by a first-version record whose later record claims the current size: read that
 * far it would run into the record after it (here: a channel_id made of the next record's
 * bytes), so it is refused at that record, and the ones before it are sent. */
static void test_a_record_larger_than_the_batch_spacing_is_refused(void) {
    int ok = 1;
    enum { COUNT = 3 };
    push_error err;
    push_client_t client = open_client();
    EXPECT(client != NULL, "client");
    if (!client) { report(__func__, 0); return; }
    unsigned char *array = calloc(COUNT + 1, sizeof(push_notification));
    /* expiration 1: what the bad read would take for the next record's first bytes */
    for (int i = 0; i < COUNT; i++) put_v1_record(array, i, i == 1 ? (uint32_t)sizeof(push_notification) : 0, 1);
    ptrdiff_t took = -1;
    int32_t rc = push_client_send_batch(client, (const push_notification *)(void *)array, COUNT, 1000, &took, &err);
    EXPECT(rc == PUSH_E_INVALID_ARGUMENT && took == 1, "rc %d took %ld", rc, (long)took);
    EXPECT(strstr(err.message, "larger than the batch's spacing") != NULL, "message: %s", err.message);
    push_result r[1];
    ptrdiff_t got = 0;
    EXPECT(push_client_poll(client, r, 1, sizeof r[0], 5000, &got) == PUSH_OK && got == 1
           && r[0].tag == 0 && r[0].outcome == PUSH_OUTCOME_ACCEPTED, "the first record's result");
    push_client_close(client, 1000);
    push_client_free(client);
    free(array);
    report(__func__, ok);
}

int main(void) {
    pki = getenv("SWIFTPUSH_TEST_PKI");
    const char *p = getenv("SWIFTPUSH_TEST_PORT"), *c = getenv("SWIFTPUSH_TEST_CHANNEL_PORT");
    if (!pki || !p || !c) {
        fprintf(stderr, "run through Tests/c/run.sh (needs SWIFTPUSH_TEST_PKI, _PORT, _CHANNEL_PORT)\n");
        return 2;
    }
    port = atol(p);
    channel_port = atol(c);
    test_create_broadcast_read_delete_then_ChannelNotRegistered();
    test_apns_refusals_of_channels_and_broadcasts();
    test_broadcasts_are_checked_before_sending();
    test_ten_thousand_broadcasts_to_one_channel_each_get_one_result();
    test_records_of_the_first_version_still_send();
    test_a_record_larger_than_the_batch_spacing_is_refused();
    return finish("broadcast");
}
