/* End-to-end tests of the C ABI, compiled against Include/swiftpush.h and linked with
 * libswiftpush.so, run against the mock APNs server over real TLS + HTTP/2 on loopback.
 * Started by Tests/c/run.sh, which launches the mock servers and passes, in the environment:
 *   SWIFTPUSH_TEST_PORT            a mock with a certificate from the test CA
 *   SWIFTPUSH_TEST_UNTRUSTED_PORT  a mock with a certificate from a CA the client doesn't trust
 *   SWIFTPUSH_TEST_PKI             the directory made by scripts/make-test-pki.sh
 * Prints one line per test and "N passed, N failed" at the end. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "swiftpush.h"
#include "test_support.h"

static const char *pki;
static long port, untrusted_port;
static const char *token64 = "00fc13adff785122b4ad28809a3420982341241421348097878e577c991de8f0";
static const char *topic = "com.example.app";
static const char *payload = "{\"aps\":{\"alert\":{\"title\":\"Hi\",\"body\":\"caf\xc3\xa9 \\u2603\"}}}";

static char *path(const char *file) {
    static char buf[4][512];
    static int i;
    i = (i + 1) % 4;
    snprintf(buf[i], sizeof buf[i], "%s/%s", pki, file);
    return buf[i];
}

/* A configuration for the trusted mock, token auth with `key_file`. */
static push_config_t config_for(long p, const char *key_file, int with_topic) {
    push_error err;
    push_config_t cfg = push_config_new();
    push_config_set_string(cfg, PUSH_OPT_HOST, "localhost", 0, &err);
    push_config_set_int(cfg, PUSH_OPT_PORT, p, &err);
    push_config_set_string(cfg, PUSH_OPT_CA_FILE, path("ca.pem"), 0, &err);
    if (push_config_set_string(cfg, PUSH_OPT_TOKEN_KEY_FILE, path(key_file), 0, &err) != PUSH_OK)
        printf("    key: %s\n", err.message);
    push_config_set_string(cfg, PUSH_OPT_KEY_ID, "TESTKEY001", 0, &err);
    push_config_set_string(cfg, PUSH_OPT_TEAM_ID, "TEAM123456", 0, &err);
    if (with_topic) push_config_set_string(cfg, PUSH_OPT_DEFAULT_TOPIC, topic, 0, &err);
    return cfg;
}

static push_client_t open_client(long p, const char *key_file, int with_topic) {
    push_error err;
    push_config_t cfg = config_for(p, key_file, with_topic);
    push_client_t client = NULL;
    int32_t rc = push_client_open(cfg, &client, &err);
    push_config_free(cfg);
    if (rc != PUSH_OK) printf("    open failed: %s\n", err.message);
    return client;
}

static push_notification notification(uint64_t tag) {
    push_notification n;
    memset(&n, 0, sizeof n);
    n.struct_size = sizeof n;
    n.device_token = token64;
    n.payload = payload;
    n.tag = tag;
    return n;
}

static void test_many_notifications_each_get_exactly_one_accepted_outcome(void) {
    int ok = 1;
    enum { COUNT = 10000, BATCH = 256 };
    push_client_t client = open_client(port, "AuthKey_TESTKEY001.p8", 1);
    EXPECT(client != NULL, "client");
    if (!client) { report(__func__, 0); return; }
    unsigned char *seen = calloc(COUNT, 1);
    push_notification batch[BATCH];
    static push_result results[BATCH];
    long sent = 0, received = 0, accepted = 0, duplicates = 0;
    push_error err;
    while (received < COUNT) {
        if (sent < COUNT) {
            long n = COUNT - sent < BATCH ? COUNT - sent : BATCH;
            for (long i = 0; i < n; i++) batch[i] = notification((uint64_t)(sent + i));
            ptrdiff_t took = 0;
            int32_t rc = push_client_send_batch(client, batch, n, 1000, &took, &err);
            EXPECT(rc == PUSH_OK || rc == PUSH_E_QUEUE_FULL, "send: %s", err.message);
            if (rc != PUSH_OK && rc != PUSH_E_QUEUE_FULL) break;
            sent += took;
        }
        ptrdiff_t got = 0;
        int32_t rc = push_client_poll(client, results, BATCH, sizeof(push_result), sent == COUNT ? 5000 : 0, &got);
        EXPECT(rc == PUSH_OK, "poll rc %d", rc);
        if (sent == COUNT && got == 0) break; /* nothing for 5 s: stop and report */
        for (ptrdiff_t i = 0; i < got; i++) {
            uint64_t tag = results[i].tag;
            if (tag >= COUNT || seen[tag]) { duplicates++; continue; }
            seen[tag] = 1;
            if (results[i].outcome == PUSH_OUTCOME_ACCEPTED && results[i].status == 200) accepted++;
            else if (accepted + 5 > received)
                printf("    tag %llu: outcome %d status %d %s %s\n", (unsigned long long)tag, results[i].outcome,
                       results[i].status, push_reason_name(results[i].reason), results[i].reason_text);
            EXPECT(strlen(results[i].apns_id) == 36, "apns-id '%s'", results[i].apns_id);
        }
        received += got;
    }
    EXPECT(sent == COUNT, "sent %ld", sent);
    EXPECT(received == COUNT, "received %ld", received);
    EXPECT(accepted == COUNT, "accepted %ld", accepted);
    EXPECT(duplicates == 0, "duplicates %ld", duplicates);
    EXPECT(push_client_close(client, 1000) == PUSH_OK, "close");
    ptrdiff_t got = 0;
    EXPECT(push_client_poll(client, results, BATCH, sizeof(push_result), 0, &got) == PUSH_E_CLOSED && got == 0,
           "nothing more after close (got %ld)", (long)got);
    push_client_free(client);
    free(seen);
    report(__func__, ok);
}

static void test_a_wrong_p8_key_is_rejected_with_InvalidProviderToken(void) {
    int ok = 1;
    push_client_t client = open_client(port, "AuthKey_WRONGKEY01.p8", 1);
    EXPECT(client != NULL, "client");
    if (!client) { report(__func__, 0); return; }
    push_error err;
    push_notification n[3] = {notification(1), notification(2), notification(3)};
    ptrdiff_t took = 0;
    EXPECT(push_client_send_batch(client, n, 3, 1000, &took, &err) == PUSH_OK && took == 3, "send: %s", err.message);
    push_result results[3];
    ptrdiff_t total = 0;
    for (int tries = 0; tries < 50 && total < 3; tries++) {
        ptrdiff_t got = 0;
        push_client_poll(client, results + total, 3 - total, sizeof(push_result), 200, &got);
        total += got;
    }
    EXPECT(total == 3, "got %ld results", (long)total);
    for (ptrdiff_t i = 0; i < total; i++) {
        EXPECT(results[i].outcome == PUSH_OUTCOME_REJECTED, "outcome %d", results[i].outcome);
        EXPECT(results[i].status == 403, "status %d", results[i].status);
        EXPECT(results[i].reason == PUSH_REASON_INVALID_PROVIDER_TOKEN, "reason %s (%s)",
               push_reason_name(results[i].reason), results[i].reason_text);
        EXPECT(strcmp(results[i].reason_text, "InvalidProviderToken") == 0, "text %s", results[i].reason_text);
    }
    push_client_close(client, 0);
    push_client_free(client);
    report(__func__, ok);
}

static void test_a_callers_apns_id_and_tag_come_back_in_the_result(void) {
    int ok = 1;
    push_client_t client = open_client(port, "AuthKey_TESTKEY001.p8", 1);
    if (!client) { report(__func__, 0); return; }
    push_error err;
    push_notification n = notification(0xFEEDFACECAFEBEEFull);
    n.apns_id = "123E4567-E89B-12D3-A456-426614174000";
    n.collapse_id = "score";
    n.flags = PUSH_NOTIFICATION_HAS_EXPIRATION;
    n.expiration = 0; /* try once */
    EXPECT(push_client_send(client, &n, 1000, &err) == PUSH_OK, "send: %s", err.message);
    push_result r;
    ptrdiff_t got = 0;
    for (int tries = 0; tries < 50 && got == 0; tries++) push_client_poll(client, &r, 1, sizeof r, 200, &got);
    EXPECT(got == 1 && r.outcome == PUSH_OUTCOME_ACCEPTED, "accepted (%s)", got ? r.reason_text : "no result");
    EXPECT(strcmp(r.apns_id, "123e4567-e89b-12d3-a456-426614174000") == 0, "apns-id lowercased and echoed: %s", r.apns_id);
    EXPECT(r.tag == 0xFEEDFACECAFEBEEFull, "tag echoed");
    EXPECT(r.attempts == 1, "one attempt (%u)", r.attempts);
    EXPECT(r.struct_size == sizeof(push_result), "struct_size %u", r.struct_size);
    push_client_close(client, 1000);
    push_client_free(client);
    report(__func__, ok);
}

static void test_an_untrusted_server_certificate_fails_clearly(void) {
    int ok = 1;
    push_client_t client = open_client(untrusted_port, "AuthKey_TESTKEY001.p8", 1);
    EXPECT(client != NULL, "client");
    if (!client) { report(__func__, 0); return; }
    push_error err;
    int32_t rc = push_client_wait_connected(client, 5000, &err);
    EXPECT(rc == PUSH_E_TLS, "wait_connected returned %d (%s)", rc, err.message);
    EXPECT(strstr(err.message, "certificate verify failed") != NULL, "message: %s", err.message);
    push_notification n = notification(7);
    EXPECT(push_client_send(client, &n, 0, &err) == PUSH_OK, "send: %s", err.message);
    push_result r;
    ptrdiff_t got = 0;
    for (int tries = 0; tries < 50 && got == 0; tries++) push_client_poll(client, &r, 1, sizeof r, 200, &got);
    EXPECT(got == 1, "one result");
    if (got == 1) {
        EXPECT(r.outcome == PUSH_OUTCOME_FAILED, "outcome %d", r.outcome);
        EXPECT(r.reason == PUSH_REASON_TLS_FAILED, "reason %s", push_reason_name(r.reason));
        EXPECT(strstr(r.reason_text, "certificate") != NULL, "text %s", r.reason_text);
    }
    push_client_close(client, 0);
    push_client_free(client);
    report(__func__, ok);
}

static void test_bad_input_returns_an_error_with_a_message(void) {
    int ok = 1;
    push_error err;
    push_result r;
    ptrdiff_t count = 0;
    push_notification n = notification(1);
    /* NULL handles and pointers */
    EXPECT(push_client_send(NULL, &n, 0, &err) == PUSH_E_INVALID_ARGUMENT && err.message[0], "NULL client");
    EXPECT(push_client_send_batch(NULL, &n, 1, 0, &count, &err) == PUSH_E_INVALID_ARGUMENT, "NULL client batch");
    EXPECT(push_client_poll(NULL, &r, 1, sizeof r, 0, &count) == PUSH_E_INVALID_ARGUMENT, "NULL client poll");
    EXPECT(push_client_wait_connected(NULL, 0, &err) == PUSH_E_INVALID_ARGUMENT, "NULL client wait");
    EXPECT(push_client_close(NULL, 0) == PUSH_OK, "close NULL");
    push_client_free(NULL);
    push_config_free(NULL);
    EXPECT(push_client_open(NULL, NULL, &err) == PUSH_E_INVALID_ARGUMENT, "open NULL");
    EXPECT(push_config_set_string(NULL, PUSH_OPT_HOST, "x", 0, &err) == PUSH_E_INVALID_ARGUMENT, "set NULL config");
    EXPECT(push_config_set_int(NULL, PUSH_OPT_PORT, 1, NULL) == PUSH_E_INVALID_ARGUMENT, "NULL err is fine");
    EXPECT(strcmp(push_strerror(PUSH_E_QUEUE_FULL), "submission queue full") == 0, "strerror");
    EXPECT(strcmp(push_strerror(12345), "unknown status code") == 0, "strerror unknown");
    EXPECT(strcmp(push_reason_name(PUSH_REASON_UNREGISTERED), "Unregistered") == 0, "reason name");
    EXPECT(strcmp(push_version(), PUSH_VERSION_STRING) == 0, "version %s", push_version());

    /* configuration errors */
    push_config_t cfg = push_config_new();
    EXPECT(push_config_set_string(cfg, PUSH_OPT_TOKEN_KEY_FILE, "/nonexistent/AuthKey.p8", 0, &err) == PUSH_E_KEY &&
               strstr(err.message, "/nonexistent/AuthKey.p8"), "unreadable key: %s", err.message);
    EXPECT(push_config_set_string(cfg, PUSH_OPT_TOKEN_KEY_FILE, path("rsa.key"), 0, &err) == PUSH_E_KEY &&
               strstr(err.message, "P-256"), "RSA key: %s", err.message);
    EXPECT(push_config_set_string(cfg, PUSH_OPT_TOKEN_KEY_FILE, path("ca.pem"), 0, &err) == PUSH_E_KEY, "cert as key: %s",
           err.message);
    EXPECT(push_config_set_int(cfg, PUSH_OPT_PORT, 70000, &err) == PUSH_E_BAD_OPTION, "port range: %s", err.message);
    EXPECT(push_config_set_int(cfg, 999, 1, &err) == PUSH_E_BAD_OPTION, "unknown option");
    EXPECT(push_config_set_string(cfg, PUSH_OPT_CA_FILE, "/nonexistent/ca.pem", 0, &err) == PUSH_E_BAD_OPTION, "CA file");
    push_client_t client = NULL;
    EXPECT(push_client_open(cfg, &client, &err) == PUSH_E_KEY && client == NULL, "open without key: %s", err.message);
    push_config_free(cfg);

    /* notification errors, refused at send */
    client = open_client(port, "AuthKey_TESTKEY001.p8", 0); /* no default topic */
    if (!client) { report(__func__, 0); return; }
    EXPECT(push_client_send(client, NULL, 0, &err) == PUSH_E_INVALID_ARGUMENT, "NULL notification");
    n = notification(1);
    EXPECT(push_client_send(client, &n, 0, &err) == PUSH_E_BAD_TOPIC && strstr(err.message, "topic"), "missing topic: %s",
           err.message);
    n.topic = topic;
    n.device_token = NULL;
    EXPECT(push_client_send(client, &n, 0, &err) == PUSH_E_BAD_DEVICE_TOKEN, "NULL token");
    n.device_token = "";
    EXPECT(push_client_send(client, &n, 0, &err) == PUSH_E_BAD_DEVICE_TOKEN && strstr(err.message, "empty"), "empty token");
    n.device_token = "00fc13adzz";
    EXPECT(push_client_send(client, &n, 0, &err) == PUSH_E_BAD_DEVICE_TOKEN && strstr(err.message, "non-hex"),
           "non-hex token: %s", err.message);
    n.device_token = "00fc13a";
    EXPECT(push_client_send(client, &n, 0, &err) == PUSH_E_BAD_DEVICE_TOKEN && strstr(err.message, "odd"), "odd token");
    n.device_token = token64;
    n.payload = "{\"aps\":";
    EXPECT(push_client_send(client, &n, 0, &err) == PUSH_E_BAD_PAYLOAD, "invalid JSON: %s", err.message);
    n.payload = "{\"aps\":{\"alert\":\"\xff\"}}";
    EXPECT(push_client_send(client, &n, 0, &err) == PUSH_E_BAD_PAYLOAD && strstr(err.message, "UTF-8"), "bad UTF-8: %s",
           err.message);
    char *big = malloc(5000);
    memset(big, ' ', 4999);
    big[0] = '{';
    big[4997] = '}';
    big[4998] = 0;
    n.payload = big;
    EXPECT(push_client_send(client, &n, 0, &err) == PUSH_E_PAYLOAD_TOO_LARGE, "4998-byte alert: %s", err.message);
    n.push_type = PUSH_TYPE_VOIP;
    n.topic = "com.example.app.voip";
    EXPECT(push_client_send(client, &n, 0, &err) == PUSH_OK, "4998-byte voip is fine: %s", err.message);
    free(big);
    n = notification(2);
    n.topic = topic;
    n.push_type = 42;
    EXPECT(push_client_send(client, &n, 0, &err) == PUSH_E_BAD_PUSH_TYPE, "push type");
    n.push_type = PUSH_TYPE_BACKGROUND;
    n.priority = 10;
    EXPECT(push_client_send(client, &n, 0, &err) == PUSH_E_BAD_PRIORITY, "background at 10: %s", err.message);
    n.push_type = PUSH_TYPE_ALERT;
    n.priority = 0;
    n.collapse_id = "0123456789012345678901234567890123456789012345678901234567890123456789";
    EXPECT(push_client_send(client, &n, 0, &err) == PUSH_E_BAD_COLLAPSE_ID, "collapse id");
    n.collapse_id = NULL;
    n.apns_id = "not-a-uuid";
    EXPECT(push_client_send(client, &n, 0, &err) == PUSH_E_BAD_APNS_ID, "apns-id");
    n.apns_id = NULL;
    EXPECT(push_client_poll(client, &r, 1, 8, 0, &count) == PUSH_E_INVALID_ARGUMENT, "result_size too small");

    /* the one valid voip notification above gets its result; then close semantics */
    ptrdiff_t got = 0;
    for (int tries = 0; tries < 50 && got == 0; tries++) push_client_poll(client, &r, 1, sizeof r, 200, &got);
    EXPECT(got == 1 && r.outcome == PUSH_OUTCOME_ACCEPTED, "voip accepted (got %ld, outcome %d %s)", (long)got,
           r.outcome, r.reason_text);
    EXPECT(push_client_close(client, 0) == PUSH_OK, "close");
    EXPECT(push_client_close(client, 0) == PUSH_OK, "close twice");
    EXPECT(push_client_send(client, &n, 0, &err) == PUSH_E_CLOSED, "send after close: %d", err.code);
    push_client_free(client);
    report(__func__, ok);
}

static void test_close_with_work_in_flight_gives_every_notification_one_outcome(void) {
    int ok = 1;
    enum { COUNT = 5000 };
    push_client_t client = open_client(port, "AuthKey_TESTKEY001.p8", 1);
    if (!client) { report(__func__, 0); return; }
    push_error err;
    static push_notification batch[COUNT];
    for (int i = 0; i < COUNT; i++) batch[i] = notification((uint64_t)i);
    ptrdiff_t took = 0;
    EXPECT(push_client_send_batch(client, batch, COUNT, 1000, &took, &err) == PUSH_OK && took == COUNT, "send %ld: %s",
           (long)took, err.message);
    EXPECT(push_client_close(client, 0) == PUSH_OK, "close at once");
    static push_result results[COUNT + 1];
    static unsigned char seen[COUNT];
    long total = 0, by[4] = {0, 0, 0, 0}, dup = 0;
    ptrdiff_t got = 0;
    while (push_client_poll(client, results, COUNT + 1, sizeof(push_result), 0, &got) == PUSH_OK && got > 0) {
        for (ptrdiff_t i = 0; i < got; i++) {
            if (results[i].tag >= COUNT || seen[results[i].tag]) { dup++; continue; }
            seen[results[i].tag] = 1;
            by[results[i].outcome & 3]++;
            EXPECT(strlen(results[i].apns_id) == 36, "every result carries an apns-id ('%s')", results[i].apns_id);
            if (results[i].outcome == PUSH_OUTCOME_FAILED)
                EXPECT(results[i].reason == PUSH_REASON_CANCELLED || results[i].reason == PUSH_REASON_CANCELLED_IN_FLIGHT,
                       "reason %s", push_reason_name(results[i].reason));
        }
        total += got;
    }
    EXPECT(total == COUNT && dup == 0, "results %ld (dup %ld): accepted %ld, failed %ld", total, dup, by[1], by[3]);
    printf("    close at once: %ld accepted, %ld cancelled\n", by[1], by[3]);
    push_client_free(client);
    report(__func__, ok);
}

/* What the result callback saw when it tried to close and free its own client. */
struct self_close {
    push_client_t client;
    int calls;
    long results;
    int32_t close_rc;
};

static void close_from_callback(void *user_data, const push_result *results, ptrdiff_t count) {
    (void)results;
    struct self_close *s = user_data;
    if (s->calls++ == 0) {
        s->close_rc = push_client_close(s->client, 0); /* refused: this is its I/O thread */
        push_client_free(s->client);                   /* ignored, for the same reason */
    }
    s->results += (long)count;
}

static void test_close_and_free_from_the_result_callback_are_refused(void) {
    int ok = 1;
    enum { COUNT = 200 };
    push_error err;
    push_config_t cfg = config_for(port, "AuthKey_TESTKEY001.p8", 1);
    static struct self_close s;
    EXPECT(push_config_set_result_callback(cfg, close_from_callback, &s, &err) == PUSH_OK, "callback: %s", err.message);
    push_client_t client = NULL;
    EXPECT(push_client_open(cfg, &client, &err) == PUSH_OK, "open: %s", err.message);
    push_config_free(cfg);
    if (!client) { report(__func__, 0); return; }
    s.client = client;
    static push_notification batch[COUNT];
    for (int i = 0; i < COUNT; i++) batch[i] = notification((uint64_t)i);
    ptrdiff_t took = 0;
    EXPECT(push_client_send_batch(client, batch, COUNT, 5000, &took, &err) == PUSH_OK && took == COUNT, "send: %s", err.message);
    EXPECT(push_client_close(client, 10000) == PUSH_OK, "close from the main thread");
    EXPECT(s.calls > 0 && s.close_rc == PUSH_E_INVALID_ARGUMENT, "close from the callback returned %d", s.close_rc);
    EXPECT(s.results == COUNT, "every result still reached the callback: %ld", s.results);
    push_client_free(client);
    report(__func__, ok);
}

/* An event loop that waits only in epoll on push_client_result_fd and polls with timeout 0:
 * every result arrives, the descriptor goes quiet when none wait, and stays readable after
 * close until PUSH_E_CLOSED. With one and with two I/O threads (one shared descriptor). */
static void results_through_the_result_fd(int io_threads) {
    int ok = 1;
    enum { COUNT = 20000, BATCH = 512 };
    push_error err;
    push_config_t cfg = config_for(port, "AuthKey_TESTKEY001.p8", 1);
    push_config_set_int(cfg, PUSH_OPT_IO_THREADS, io_threads, &err);
    push_client_t client = NULL;
    EXPECT(push_client_open(cfg, &client, &err) == PUSH_OK, "open: %s", err.message);
    push_config_free(cfg);
    if (!client) { report(__func__, 0); return; }
    int fd = -1;
    EXPECT(push_client_result_fd(client, &fd, &err) == PUSH_OK && fd >= 0, "result fd: %s", err.message);
    int fd2 = -2;
    EXPECT(push_client_result_fd(client, &fd2, NULL) == PUSH_OK && fd2 == fd, "the same descriptor each time");
    int ep = epoll_create1(0);
    struct epoll_event ev = { .events = EPOLLIN };
    EXPECT(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) == 0, "epoll_ctl");
    struct epoll_event got_ev;
    EXPECT(epoll_wait(ep, &got_ev, 1, 0) == 0, "quiet before anything was sent");
    unsigned char *seen = calloc(COUNT, 1);
    static push_notification batch[BATCH];
    static push_result results[BATCH];
    long sent = 0, received = 0, accepted = 0, wakeups = 0, empty_wakeups = 0;
    while (received < COUNT) {
        if (sent < COUNT) {
            long n = COUNT - sent < BATCH ? COUNT - sent : BATCH;
            for (long i = 0; i < n; i++) batch[i] = notification((uint64_t)(sent + i));
            ptrdiff_t took = 0;
            int32_t rc = push_client_send_batch(client, batch, n, 0, &took, &err);
            EXPECT(rc == PUSH_OK || rc == PUSH_E_QUEUE_FULL, "send: %s", err.message);
            sent += took;
        }
        int ready = epoll_wait(ep, &got_ev, 1, 5000);
        if (ready == 0) { EXPECT(0, "no readiness for 5 s with %ld results missing", COUNT - received); break; }
        wakeups++;
        ptrdiff_t got = 0, total = 0;
        do {
            EXPECT(push_client_poll(client, results, BATCH, sizeof(push_result), 0, &got) == PUSH_OK, "poll");
            for (ptrdiff_t i = 0; i < got; i++) {
                uint64_t tag = results[i].tag;
                EXPECT(tag < COUNT && !seen[tag], "tag %llu once", (unsigned long long)tag);
                if (tag < COUNT) seen[tag] = 1;
                if (results[i].outcome == PUSH_OUTCOME_ACCEPTED) accepted++;
            }
            received += got;
            total += got;
        } while (got > 0);
        if (total == 0) empty_wakeups++;
    }
    EXPECT(received == COUNT && accepted == COUNT, "received %ld, accepted %ld", received, accepted);
    EXPECT(empty_wakeups <= wakeups / 2 + 1, "mostly woken with results (%ld of %ld empty)", empty_wakeups, wakeups);
    EXPECT(epoll_wait(ep, &got_ev, 1, 0) == 0, "quiet once everything was polled");
    EXPECT(push_client_close(client, 1000) == PUSH_OK, "close");
    EXPECT(epoll_wait(ep, &got_ev, 1, 5000) == 1, "readable once the client has finished");
    ptrdiff_t got = 0;
    EXPECT(push_client_poll(client, results, BATCH, sizeof(push_result), 0, &got) == PUSH_E_CLOSED, "PUSH_E_CLOSED");
    close(ep);
    push_client_free(client);
    free(seen);
    printf("    %d I/O thread(s): %ld results in %ld wake-ups\n", io_threads, received, wakeups);
    report(io_threads == 1 ? "results_through_the_result_fd (1 I/O thread)" : "results_through_the_result_fd (2 I/O threads)", ok);
}

static void ignore_results(void *user_data, const push_result *results, ptrdiff_t count) {
    (void)user_data; (void)results; (void)count;
}

static void test_no_result_fd_with_a_result_callback(void) {
    int ok = 1;
    push_error err;
    push_config_t cfg = config_for(port, "AuthKey_TESTKEY001.p8", 1);
    push_config_set_result_callback(cfg, ignore_results, NULL, &err);
    push_client_t client = NULL;
    EXPECT(push_client_open(cfg, &client, &err) == PUSH_OK, "open: %s", err.message);
    push_config_free(cfg);
    int fd = 7;
    EXPECT(push_client_result_fd(client, &fd, &err) == PUSH_E_INVALID_ARGUMENT && fd == -1, "refused");
    EXPECT(strstr(err.message, "callback") != NULL, "message: %s", err.message);
    push_client_close(client, 0);
    push_client_free(client);
    report(__func__, ok);
}

/* Log events, collected from the I/O thread. */
static struct {
    pthread_mutex_t lock;
    char text[16384];
    size_t length;
    int below_min;
} logged = { PTHREAD_MUTEX_INITIALIZER, "", 0, 0 };

static void collect_log(void *user_data, int32_t level, const char *event, const char *message) {
    pthread_mutex_lock(&logged.lock);
    if (level < *(int32_t *)user_data) logged.below_min++;
    int n = snprintf(logged.text + logged.length, sizeof logged.text - logged.length, "%d %s %s\n", level, event, message);
    if (n > 0 && logged.length + (size_t)n < sizeof logged.text) logged.length += (size_t)n;
    pthread_mutex_unlock(&logged.lock);
}

static int log_has(const char *needle) {
    pthread_mutex_lock(&logged.lock);
    int found = strstr(logged.text, needle) != NULL;
    pthread_mutex_unlock(&logged.lock);
    return found;
}

/* The log callback hears the connection's life at DEBUG, a TLS failure and the back-off it causes
 * at WARNING and above, and never the device token or the provider token. */
static void test_the_log_callback_reports_events_without_secrets(void) {
    int ok = 1;
    push_error err;
    static int32_t debug = PUSH_LOG_DEBUG, warning = PUSH_LOG_WARNING;
    push_config_t cfg = config_for(port, "AuthKey_TESTKEY001.p8", 1);
    EXPECT(push_config_set_log_callback(cfg, collect_log, &debug, 5, &err) == PUSH_E_BAD_OPTION, "min_level 5 refused");
    EXPECT(strstr(err.message, "PUSH_LOG_DEBUG") != NULL, "message: %s", err.message);
    EXPECT(push_config_set_log_callback(NULL, collect_log, &debug, PUSH_LOG_DEBUG, &err) == PUSH_E_INVALID_ARGUMENT, "NULL config");
    EXPECT(push_config_set_log_callback(cfg, collect_log, &debug, PUSH_LOG_DEBUG, &err) == PUSH_OK, "set: %s", err.message);
    push_client_t client = NULL;
    EXPECT(push_client_open(cfg, &client, &err) == PUSH_OK, "open: %s", err.message);
    push_config_free(cfg);
    EXPECT(push_client_wait_connected(client, 5000, &err) == PUSH_OK, "connected: %s", err.message);
    push_notification n = notification(1);
    EXPECT(push_client_send(client, &n, 1000, &err) == PUSH_OK, "send");
    push_result r;
    ptrdiff_t got = 0;
    EXPECT(push_client_poll(client, &r, 1, sizeof r, 5000, &got) == PUSH_OK && got == 1, "result");
    push_client_close(client, 1000);
    push_client_free(client);
    EXPECT(log_has("10 connection.connecting connecting to localhost:"), "connecting at DEBUG:\n%s", logged.text);
    EXPECT(log_has("20 connection.ready connection to localhost:"), "ready at INFO:\n%s", logged.text);
    EXPECT(log_has("connection.closed"), "closed:\n%s", logged.text);
    EXPECT(!log_has(token64) && !log_has("bearer") && !log_has("eyJ"), "no secrets:\n%s", logged.text);

    pthread_mutex_lock(&logged.lock);
    logged.length = 0; logged.text[0] = 0;
    pthread_mutex_unlock(&logged.lock);
    cfg = config_for(untrusted_port, "AuthKey_TESTKEY001.p8", 1);
    push_config_set_log_callback(cfg, collect_log, &warning, PUSH_LOG_WARNING, &err);
    EXPECT(push_client_open(cfg, &client, &err) == PUSH_OK, "open: %s", err.message);
    push_config_free(cfg);
    EXPECT(push_client_wait_connected(client, 5000, &err) == PUSH_E_TLS, "TLS failure");
    push_client_close(client, 0);
    push_client_free(client);
    EXPECT(log_has("40 tls.failure TLS handshake failed: certificate verify failed"), "tls.failure at ERROR:\n%s", logged.text);
    EXPECT(log_has("30 reconnect.scheduled") && log_has("next connection attempt in"), "back-off at WARNING:\n%s", logged.text);
    EXPECT(!log_has("connection.connecting") && logged.below_min == 0, "nothing below WARNING:\n%s", logged.text);
    report(__func__, ok);
}

/* push_client_metrics_text: ask for the size, refuse a small buffer, then the counters. */
static void test_metrics_text_counts_outcomes_in_prometheus_format(void) {
    int ok = 1;
    push_error err;
    push_client_t client = open_client(port, "AuthKey_TESTKEY001.p8", 1);
    if (!client) { report(__func__, 0); return; }
    enum { COUNT = 25 };
    push_notification batch[COUNT];
    for (int i = 0; i < COUNT; i++) batch[i] = notification((uint64_t)i);
    ptrdiff_t took = 0;
    EXPECT(push_client_send_batch(client, batch, COUNT, 1000, &took, &err) == PUSH_OK && took == COUNT, "send");
    push_result r[COUNT];
    ptrdiff_t got = 0, total = 0;
    while (total < COUNT && push_client_poll(client, r, COUNT, sizeof r[0], 5000, &got) == PUSH_OK && got > 0) total += got;
    ptrdiff_t length = -1;
    EXPECT(push_client_metrics_text(client, NULL, 0, &length, &err) == PUSH_OK && length > 100, "size %td", length);
    char small[16];
    ptrdiff_t needed = 0;
    EXPECT(push_client_metrics_text(client, small, sizeof small, &needed, &err) == PUSH_E_BUFFER_TOO_SMALL && needed == length,
           "small buffer: %s", err.message);
    char *text = malloc((size_t)length + 1);
    EXPECT(push_client_metrics_text(client, text, length + 1, &length, &err) == PUSH_OK && strlen(text) == (size_t)length, "text");
    EXPECT(strstr(text, "# TYPE swiftpush_notifications_total counter\n") != NULL, "TYPE line:\n%s", text);
    EXPECT(strstr(text, "swiftpush_notifications_total{outcome=\"accepted\",reason=\"None\"} 25\n") != NULL, "accepted 25:\n%s", text);
    EXPECT(strstr(text, "swiftpush_answer_latency_seconds_count 25\n") != NULL, "histogram count:\n%s", text);
    EXPECT(strstr(text, "swiftpush_connections{state=\"open\"} ") != NULL, "the open connections gauge:\n%s", text);
    EXPECT(strstr(text, "swiftpush_writes_total 25\n") != NULL, "25 writes:\n%s", text);
    free(text);
    EXPECT(push_client_metrics_text(NULL, NULL, 0, &length, &err) == PUSH_E_INVALID_ARGUMENT, "NULL client");
    EXPECT(push_client_metrics_text(client, NULL, 0, NULL, &err) == PUSH_E_INVALID_ARGUMENT, "NULL out_length");
    EXPECT(push_client_metrics_text(client, small, -1, &length, &err) == PUSH_E_INVALID_ARGUMENT, "negative capacity");
    push_client_close(client, 0);
    push_client_free(client);
    report(__func__, ok);
}

int main(void) {
    pki = getenv("SWIFTPUSH_TEST_PKI");
    const char *p = getenv("SWIFTPUSH_TEST_PORT"), *u = getenv("SWIFTPUSH_TEST_UNTRUSTED_PORT");
    if (!pki || !p || !u) {
        fprintf(stderr, "run through Tests/c/run.sh (needs SWIFTPUSH_TEST_PKI, _PORT, _UNTRUSTED_PORT)\n");
        return 2;
    }
    port = atol(p);
    untrusted_port = atol(u);
    test_many_notifications_each_get_exactly_one_accepted_outcome();
    test_a_wrong_p8_key_is_rejected_with_InvalidProviderToken();
    test_a_callers_apns_id_and_tag_come_back_in_the_result();
    test_an_untrusted_server_certificate_fails_clearly();
    test_bad_input_returns_an_error_with_a_message();
    test_close_with_work_in_flight_gives_every_notification_one_outcome();
    test_close_and_free_from_the_result_callback_are_refused();
    results_through_the_result_fd(1);
    results_through_the_result_fd(2);
    test_no_result_fd_with_a_result_callback();
    test_the_log_callback_reports_events_without_secrets();
    test_metrics_text_counts_outcomes_in_prometheus_format();
    return finish("c-abi");
}
