/* A deadline per notification through the C ABI (push_notification.deadline_ms, issue 33 item 2),
 * against a mock APNs server that never answers one token, and a listener that never completes
 * a TLS handshake. The client's own deadline (PUSH_OPT_DEADLINE_MS) stays at its default of
 * 60 s: every bound below is far under it, so only the notification's own deadline can have
 * ended the wait.
 * Started by Tests/c/run.sh, which passes, in the environment:
 *   SWIFTPUSH_TEST_PORT         a mock started with --stall-token STALLED_TOKEN (below)
 *   SWIFTPUSH_TEST_PKI          the directory made by scripts/make-test-pki.sh
 * Prints one line per test and "N passed, N failed" at the end. */
#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "swiftpush.h"
#include "test_support.h"

static const char *pki;
static long port;
static const char *token64 = "00fc13adff785122b4ad28809a3420982341241421348097878e577c991de8f0";
/* The mock never answers requests for this token (run.sh starts it with --stall-token). */
static const char *stalled64 = "5a11ed005a11ed005a11ed005a11ed005a11ed005a11ed005a11ed005a11ed00";
static const char *payload = "{\"aps\":{\"alert\":\"deadline\"}}";

/* How long a 200 ms deadline may take to end, at most: the deadline, the client's 50 ms scan
 * and a loaded machine's scheduling; a twelfth of the client's 60 s default. */
#define BOUND_MS 5000

static char *path(const char *file) {
    static char buf[2][512];
    static int i;
    i = (i + 1) % 2;
    snprintf(buf[i], sizeof buf[i], "%s/%s", pki, file);
    return buf[i];
}

static long now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000L + t.tv_nsec / 1000000L;
}

static push_client_t open_client(long p) {
    push_error err;
    push_config_t cfg = push_config_new();
    push_config_set_string(cfg, PUSH_OPT_HOST, "localhost", 0, &err);
    push_config_set_int(cfg, PUSH_OPT_PORT, p, &err);
    push_config_set_string(cfg, PUSH_OPT_CA_FILE, path("ca.pem"), 0, &err);
    push_config_set_string(cfg, PUSH_OPT_TOKEN_KEY_FILE, path("AuthKey_TESTKEY001.p8"), 0, &err);
    push_config_set_string(cfg, PUSH_OPT_KEY_ID, "TESTKEY001", 0, &err);
    push_config_set_string(cfg, PUSH_OPT_TEAM_ID, "TEAM123456", 0, &err);
    push_config_set_string(cfg, PUSH_OPT_DEFAULT_TOPIC, "com.example.app", 0, &err);
    push_client_t client = NULL;
    if (push_client_open(cfg, &client, &err) != PUSH_OK) printf("    open failed: %s\n", err.message);
    push_config_free(cfg);
    return client;
}

static push_notification notification(const char *token, uint64_t tag, int64_t deadline_ms) {
    push_notification n;
    memset(&n, 0, sizeof n);
    n.struct_size = sizeof n;
    n.device_token = token;
    n.payload = payload;
    n.tag = tag;
    n.deadline_ms = deadline_ms;
    return n;
}

/* Polls until `count` results arrived or BOUND_MS passed; returns how many arrived. */
static ptrdiff_t collect(push_client_t client, push_result *results, ptrdiff_t count) {
    ptrdiff_t have = 0;
    long until = now_ms() + BOUND_MS;
    while (have < count && now_ms() < until) {
        ptrdiff_t got = 0;
        push_client_poll(client, results + have, count - have, sizeof(push_result), (int32_t)(until - now_ms()), &got);
        have += got;
    }
    return have;
}

/* One accepted notification first: the mock allows one stream until a first success. */
static int warm_up(push_client_t client) {
    push_error err;
    push_result r;
    push_notification n = notification(token64, 1, 0);
    if (push_client_send(client, &n, 1000, &err) != PUSH_OK) return 0;
    return collect(client, &r, 1) == 1 && r.outcome == PUSH_OUTCOME_ACCEPTED;
}

static void test_a_sent_notification_unanswered_ends_Timeout_at_its_own_deadline(void) {
    int ok = 1;
    push_client_t client = open_client(port);
    EXPECT(client && warm_up(client), "the first notification accepted");
    push_error err;
    push_notification n = notification(stalled64, 2, 200);
    long start = now_ms();
    EXPECT(push_client_send(client, &n, 1000, &err) == PUSH_OK, "send: %s", err.message);
    push_result r;
    EXPECT(collect(client, &r, 1) == 1, "a result within %d ms", BOUND_MS);
    long took = now_ms() - start;
    EXPECT(r.tag == 2 && r.outcome == PUSH_OUTCOME_FAILED && r.reason == PUSH_REASON_TIMEOUT,
           "tag %llu outcome %d reason %s", (unsigned long long)r.tag, r.outcome, push_reason_name(r.reason));
    EXPECT(took >= 200 && took < BOUND_MS, "took %ld ms (deadline 200 ms, the client's 60 s)", took);
    push_client_close(client, 0);
    push_client_free(client);
    report(__func__, ok);
}

static void test_a_batch_takes_each_records_deadline(void) {
    int ok = 1;
    push_client_t client = open_client(port);
    EXPECT(client && warm_up(client), "the first notification accepted");
    push_error err;
    /* Two stalled with deadlines of their own, one answered with the client's. */
    push_notification batch[3] = {notification(stalled64, 10, 200), notification(token64, 11, 0),
                                  notification(stalled64, 12, 300)};
    ptrdiff_t took_count = 0;
    long start = now_ms();
    EXPECT(push_client_send_batch(client, batch, 3, 1000, &took_count, &err) == PUSH_OK && took_count == 3,
           "send_batch: %s", err.message);
    push_result r[3];
    EXPECT(collect(client, r, 3) == 3, "three results within %d ms", BOUND_MS);
    long took = now_ms() - start;
    int timeouts = 0, accepted = 0;
    for (int i = 0; i < 3; i++) {
        if (r[i].outcome == PUSH_OUTCOME_FAILED && r[i].reason == PUSH_REASON_TIMEOUT && r[i].tag != 11) timeouts++;
        if (r[i].outcome == PUSH_OUTCOME_ACCEPTED && r[i].tag == 11) accepted++;
    }
    EXPECT(timeouts == 2 && accepted == 1, "%d Timeout, %d accepted", timeouts, accepted);
    EXPECT(took >= 300 && took < BOUND_MS, "took %ld ms (deadlines 200 and 300 ms)", took);
    push_client_close(client, 0);
    push_client_free(client);
    report(__func__, ok);
}

static void test_a_notification_never_sent_ends_QueueTimeout_at_its_own_deadline(void) {
    int ok = 1;
    /* A listener that never completes a TLS handshake: nothing is ever sent. */
    int listener = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    EXPECT(bind(listener, (struct sockaddr *)&a, sizeof a) == 0 && listen(listener, 16) == 0
           && getsockname(listener, (struct sockaddr *)&a, &len) == 0, "a silent listener");
    push_client_t client = open_client(ntohs(a.sin_port));
    EXPECT(client != NULL, "client");
    push_error err;
    push_notification n = notification(token64, 3, 200);
    long start = now_ms();
    EXPECT(push_client_send(client, &n, 1000, &err) == PUSH_OK, "send: %s", err.message);
    push_result r;
    EXPECT(collect(client, &r, 1) == 1, "a result within %d ms", BOUND_MS);
    long took = now_ms() - start;
    EXPECT(r.tag == 3 && r.outcome == PUSH_OUTCOME_FAILED && r.reason == PUSH_REASON_QUEUE_TIMEOUT,
           "tag %llu outcome %d reason %s (%s)", (unsigned long long)r.tag, r.outcome, push_reason_name(r.reason), r.reason_text);
    EXPECT(took >= 200 && took < BOUND_MS, "took %ld ms (deadline 200 ms, the client's 60 s)", took);
    push_client_close(client, 0);
    push_client_free(client);
    close(listener);
    report(__func__, ok);
}

static void test_a_negative_deadline_is_refused_naming_the_field(void) {
    int ok = 1;
    push_client_t client = open_client(port);
    push_error err;
    push_notification n = notification(token64, 4, -1);
    EXPECT(push_client_send(client, &n, 0, &err) == PUSH_E_INVALID_ARGUMENT && strstr(err.message, "deadline_ms"),
           "message '%s'", err.message);
    push_client_close(client, 0);
    push_client_free(client);
    report(__func__, ok);
}

/* A program built against the second header: a record of PUSH_NOTIFICATION_SIZE_V2 bytes is
 * never read past its end (the bytes where deadline_ms would be hold -1 here, which a read
 * would refuse) and takes the client's deadline. */
static void test_a_second_version_record_is_read_only_as_far_as_its_size(void) {
    int ok = 1;
    push_client_t client = open_client(port);
    EXPECT(client && warm_up(client), "the first notification accepted");
    push_error err;
    push_notification n = notification(token64, 5, -1);
    n.struct_size = (uint32_t)PUSH_NOTIFICATION_SIZE_V2;
    EXPECT(push_client_send(client, &n, 1000, &err) == PUSH_OK, "send: %s", err.message);
    push_result r;
    EXPECT(collect(client, &r, 1) == 1 && r.tag == 5 && r.outcome == PUSH_OUTCOME_ACCEPTED,
           "tag %llu outcome %d", (unsigned long long)r.tag, r.outcome);
    push_client_close(client, 0);
    push_client_free(client);
    report(__func__, ok);
}

int main(void) {
    pki = getenv("SWIFTPUSH_TEST_PKI");
    const char *p = getenv("SWIFTPUSH_TEST_PORT");
    if (!pki || !p) {
        fprintf(stderr, "run through Tests/c/run.sh (needs SWIFTPUSH_TEST_PKI, SWIFTPUSH_TEST_PORT)\n");
        return 2;
    }
    port = atol(p);
    test_a_sent_notification_unanswered_ends_Timeout_at_its_own_deadline();
    test_a_batch_takes_each_records_deadline();
    test_a_notification_never_sent_ends_QueueTimeout_at_its_own_deadline();
    test_a_negative_deadline_is_refused_naming_the_field();
    test_a_second_version_record_is_read_only_as_far_as_its_size();
    return finish("c-deadline");
}
