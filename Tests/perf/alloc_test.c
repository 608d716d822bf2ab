/* The send -> outcome path allocates nothing per notification in steady state (issue:
 * "No heap allocation per notification"). Runs under Tests/perf/malloc_counter.so: warms up
 * with 20,000 notifications, then counts every allocation in the process while 100,000 more
 * go out and their results come back, and fails above the threshold below. What remains is
 * time-based work (stats snapshots, deadline scans), not per-notification work.
 *   alloc_test HOST PORT CA KEY */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "swiftpush.h"

/* Checked-in threshold: allocations per notification, measured at 0.0x; a regression to one
 * malloc per notification (1.0) or nghttp2's default allocator (~6) fails loudly. */
#define MAX_ALLOCATIONS_PER_NOTIFICATION 0.2

static long run(push_client_t client, long count, uint64_t first_tag) {
    enum { BATCH = 256, WINDOW = 5000 };
    static push_notification batch[BATCH];
    static push_result results[BATCH];
    static const char payload[] = "{\"aps\":{\"alert\":\"allocation test\"}}";
    long sent = 0, done = 0;
    push_error err;
    for (int i = 0; i < BATCH; i++) {
        memset(&batch[i], 0, sizeof batch[i]);
        batch[i].struct_size = sizeof batch[i];
        batch[i].device_token = "00fc13adff785122b4ad28809a3420982341241421348097878e577c991de8f0";
        batch[i].payload = payload;
        batch[i].payload_len = sizeof payload - 1;
    }
    while (done < count) {
        if (sent < count && sent - done < WINDOW) {
            long n = count - sent < BATCH ? count - sent : BATCH;
            for (long i = 0; i < n; i++) batch[i].tag = first_tag + (uint64_t)(sent + i);
            ptrdiff_t took = 0;
            push_client_send_batch(client, batch, n, 0, &took, &err);
            sent += took;
        }
        ptrdiff_t got = 0;
        push_client_poll(client, results, BATCH, sizeof(push_result), sent - done >= WINDOW || sent == count ? 100 : 0, &got);
        for (ptrdiff_t i = 0; i < got; i++)
            if (results[i].outcome != PUSH_OUTCOME_ACCEPTED) return -1;
        done += got;
    }
    return done;
}

int main(int argc, char **argv) {
    if (argc != 5) { fprintf(stderr, "usage: alloc_test HOST PORT CA KEY\n"); return 2; }
    uint64_t (*allocations)(void) = (uint64_t (*)(void))dlsym(RTLD_DEFAULT, "swiftpush_test_allocations");
    if (!allocations) { fprintf(stderr, "alloc_test: run with LD_PRELOAD=malloc_counter.so\n"); return 2; }
    push_error err;
    push_config_t cfg = push_config_new();
    push_config_set_string(cfg, PUSH_OPT_HOST, argv[1], 0, &err);
    push_config_set_int(cfg, PUSH_OPT_PORT, atol(argv[2]), &err);
    push_config_set_string(cfg, PUSH_OPT_CA_FILE, argv[3], 0, &err);
    push_config_set_string(cfg, PUSH_OPT_TOKEN_KEY_FILE, argv[4], 0, &err);
    push_config_set_string(cfg, PUSH_OPT_KEY_ID, "TESTKEY001", 0, &err);
    push_config_set_string(cfg, PUSH_OPT_TEAM_ID, "TEAM123456", 0, &err);
    push_config_set_string(cfg, PUSH_OPT_DEFAULT_TOPIC, "com.example.app", 0, &err);
    push_client_t client = NULL;
    if (push_client_open(cfg, &client, &err) != PUSH_OK) { fprintf(stderr, "open: %s\n", err.message); return 2; }
    push_config_free(cfg);
    int ok = 1;
    if (run(client, 20000, 0) != 20000) { printf("FAILED: warm-up notifications were not all accepted\n"); ok = 0; }
    uint64_t before = allocations();
    long n = run(client, 100000, 20000);
    uint64_t after = allocations();
    double per = (double)(after - before) / 100000.0;
    if (n != 100000) { printf("FAILED: measured notifications were not all accepted\n"); ok = 0; }
    printf("%s: %llu allocations for 100,000 notifications (%.3f per notification, threshold %.2f)\n",
           per <= MAX_ALLOCATIONS_PER_NOTIFICATION ? "ok" : "FAILED", (unsigned long long)(after - before), per,
           MAX_ALLOCATIONS_PER_NOTIFICATION);
    if (per > MAX_ALLOCATIONS_PER_NOTIFICATION) ok = 0;
    push_client_close(client, 1000);
    push_client_free(client);
    printf("alloc: %d passed, %d failed\n", ok, !ok);
    return ok ? 0 : 1;
}
