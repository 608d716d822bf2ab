/* soak.c: sends COUNT notifications through ONE libswiftpush client in rounds and samples the
 * process's resident memory (/proc/self/statm) and open file descriptors (/proc/self/fd) after
 * every round, to show that a long run keeps both flat (issue #8, item 3). Run it against a
 * mock that replaces connections often (`swiftpush-cli mock --goaway-after N`): the pool then
 * opens and closes connections many times during the soak.
 *
 *   soak --key AuthKey.p8 [--host localhost] --port P --ca ca.pem [--count 5000000]
 *        [--rounds 50] [--window 10000] [--connections 2] [--warmup-rounds N]
 *        [--max-rss-growth-kb 8192]
 *
 * After every round (all of its results polled) it waits until the pool has settled (every
 * position open, none opening or draining) for up to 2 s, then samples. Prints a table, one
 * line per round, and a last machine-readable line:
 *   soak-result count=N accepted=N rounds=R rss_start_kb=K rss_warm_kb=K rss_end_kb=K rss_max_kb=K
 *               fds_warm=F fds_end=F fds_max_settled=F connections_started=C goaways=G seconds=S
 * Fails (exit 1) when a notification was not accepted, when resident memory after the warm-up
 * grows by more than --max-rss-growth-kb, or when the settled descriptor count ever exceeds
 * its value at the end of the warm-up. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "swiftpush.h"

#define BATCH 512

static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static const char *arg(int argc, char **argv, const char *name, const char *fallback) {
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], name) == 0) return argv[i + 1];
    return fallback;
}

/* Resident set size in KiB (second field of /proc/self/statm, in pages). */
static long rss_kb(void) {
    FILE *f = fopen("/proc/self/statm", "r");
    long size = 0, resident = 0;
    if (!f) return -1;
    if (fscanf(f, "%ld %ld", &size, &resident) != 2) resident = -1;
    fclose(f);
    return resident < 0 ? -1 : resident * (sysconf(_SC_PAGESIZE) / 1024);
}

/* Open descriptors: entries of /proc/self/fd, less ".", ".." and the directory's own. */
static int fd_count(void) {
    DIR *d = opendir("/proc/self/fd");
    int n = 0;
    if (!d) return -1;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.') n++;
    closedir(d);
    return n - 1;
}

static int check(int32_t rc, const push_error *err, const char *what) {
    if (rc != PUSH_OK) {
        fprintf(stderr, "soak: %s: %s (%s)\n", what, err->message, push_strerror(rc));
        return 0;
    }
    return 1;
}

/* Waits (polling stats) until every pool position holds an open connection and nothing is
 * opening or draining; returns 1 when settled, 0 after 2 s. */
static int settle(push_client_t client, long connections, push_stats *stats) {
    for (int i = 0; i < 200; i++) {
        memset(stats, 0, sizeof *stats);
        push_client_stats(client, stats, sizeof *stats);
        if ((long)stats->connections_open == connections && stats->connections_opening == 0 &&
            (long)stats->connection_count == connections)
            return 1;
        struct timespec pause = {0, 10 * 1000 * 1000};
        nanosleep(&pause, NULL);
    }
    return 0;
}

int main(int argc, char **argv) {
    const char *host = arg(argc, argv, "--host", "localhost");
    long port = atol(arg(argc, argv, "--port", "2197"));
    const char *ca = arg(argc, argv, "--ca", NULL);
    const char *key = arg(argc, argv, "--key", NULL);
    long count = atol(arg(argc, argv, "--count", "5000000"));
    long rounds = atol(arg(argc, argv, "--rounds", "50"));
    long window = atol(arg(argc, argv, "--window", "10000"));
    long connections = atol(arg(argc, argv, "--connections", "2"));
    long warmup = atol(arg(argc, argv, "--warmup-rounds", "0"));
    long max_growth_kb = atol(arg(argc, argv, "--max-rss-growth-kb", "8192"));
    if (!key || count <= 0 || rounds <= 0 || window <= 0 || connections <= 0) {
        fprintf(stderr, "usage: soak --key AuthKey.p8 --port P --ca ca.pem [--count N --rounds R --window W "
                        "--connections C --warmup-rounds N --max-rss-growth-kb K]\n");
        return 2;
    }
    if (warmup <= 0) warmup = rounds / 5 > 2 ? rounds / 5 : (rounds > 2 ? 2 : 1);
    if (warmup >= rounds) warmup = rounds - 1;
    long rss_start = rss_kb();

    const char *token = "b6f1f6a2c3d4e5f60718293a4b5c6d7e8f90112233445566778899aabbccddee";
    const char *payload = "{\"aps\":{\"alert\":{\"title\":\"Soak\",\"body\":\"round after round\"}},\"pad\":\""
                          "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"}";

    push_error err;
    push_config_t cfg = push_config_new();
    int ok = check(push_config_set_string(cfg, PUSH_OPT_HOST, host, 0, &err), &err, "host") &&
             check(push_config_set_int(cfg, PUSH_OPT_PORT, port, &err), &err, "port") &&
             (!ca || check(push_config_set_string(cfg, PUSH_OPT_CA_FILE, ca, 0, &err), &err, "CA file")) &&
             check(push_config_set_string(cfg, PUSH_OPT_TOKEN_KEY_FILE, key, 0, &err), &err, "key") &&
             check(push_config_set_string(cfg, PUSH_OPT_KEY_ID, "TESTKEY001", 0, &err), &err, "key id") &&
             check(push_config_set_string(cfg, PUSH_OPT_TEAM_ID, "TEAM123456", 0, &err), &err, "team id") &&
             check(push_config_set_string(cfg, PUSH_OPT_DEFAULT_TOPIC, "com.example.app", 0, &err), &err, "topic") &&
             check(push_config_set_int(cfg, PUSH_OPT_CONNECTIONS, connections, &err), &err, "connections") &&
             check(push_config_set_int(cfg, PUSH_OPT_QUEUE_CAPACITY, window + BATCH, &err), &err, "queue");
    push_client_t client = NULL;
    if (ok) ok = check(push_client_open(cfg, &client, &err), &err, "open");
    push_config_free(cfg);
    if (!ok) return 1;
    if (!check(push_client_wait_connected(client, 10000, &err), &err, "connect")) {
        push_client_close(client, 0);
        push_client_free(client);
        return 1;
    }

    push_notification batch[BATCH];
    memset(batch, 0, sizeof batch);
    for (int i = 0; i < BATCH; i++) {
        batch[i].struct_size = sizeof(push_notification);
        batch[i].push_type = PUSH_TYPE_ALERT;
        batch[i].device_token = token;
        batch[i].payload = payload;
    }
    static push_result results[BATCH];
    long sent = 0, done = 0, accepted = 0, not_accepted = 0;
    long rss_warm = -1, rss_max_after = 0, rss_end = 0;
    int fds_warm = -1, fds_max_settled = 0, fds_end = 0, fd_growth = 0;
    push_stats stats;
    double start = now_seconds();

    printf("%6s %10s %9s %6s %8s %11s %8s %8s %8s\n", "round", "done", "rss_kb", "fds", "settled", "conns_total",
           "goaways", "rate/s", "phase");
    for (long round = 1; round <= rounds; round++) {
        long round_end = count / rounds * round + (round == rounds ? count % rounds : 0);
        double round_start = now_seconds();
        long round_first = done;
        while (done < round_end) {
            long room = window - (sent - done);
            if (sent < round_end && room > 0) {
                long n = round_end - sent;
                if (n > room) n = room;
                if (n > BATCH) n = BATCH;
                for (long i = 0; i < n; i++) batch[i].tag = (uint64_t)(sent + i);
                ptrdiff_t took = 0;
                int32_t rc = push_client_send_batch(client, batch, (ptrdiff_t)n, 0, &took, &err);
                sent += took;
                if (rc != PUSH_OK && rc != PUSH_E_QUEUE_FULL) {
                    fprintf(stderr, "soak: send: %s\n", err.message);
                    round = rounds + 1;
                    break;
                }
            }
            ptrdiff_t got = 0;
            int wait = (sent >= round_end || sent - done >= window) ? 100 : 0;
            push_client_poll(client, results, BATCH, sizeof(push_result), wait, &got);
            for (ptrdiff_t i = 0; i < got; i++) {
                if (results[i].outcome == PUSH_OUTCOME_ACCEPTED) {
                    accepted++;
                } else if (++not_accepted <= 5) {
                    fprintf(stderr, "soak: notification %llu: outcome %d status %d %s (%s)\n",
                            (unsigned long long)results[i].tag, results[i].outcome, results[i].status,
                            push_reason_name(results[i].reason), results[i].reason_text);
                }
            }
            done += got;
        }
        double rate = (double)(done - round_first) / (now_seconds() - round_start);
        int settled = settle(client, connections, &stats);
        long rss = rss_kb();
        int fds = fd_count();
        const char *phase = round <= warmup ? "warm-up" : "measured";
        printf("%6ld %10ld %9ld %6d %8s %11llu %8llu %8.0f %8s\n", round, done, rss, fds, settled ? "yes" : "no",
               (unsigned long long)stats.connections_started, (unsigned long long)stats.goaways, rate, phase);
        fflush(stdout);
        if (round == warmup) {
            rss_warm = rss;
            fds_warm = fds;
        } else if (round > warmup) {
            if (rss > rss_max_after) rss_max_after = rss;
            if (settled && fds > fds_max_settled) fds_max_settled = fds;
            if (settled && fds > fds_warm) fd_growth = 1;
        }
        rss_end = rss;
        fds_end = fds;
    }
    double seconds = now_seconds() - start;
    memset(&stats, 0, sizeof stats);
    push_client_stats(client, &stats, sizeof stats);
    push_client_close(client, 5000);
    push_client_free(client);

    printf("soak-result count=%ld accepted=%ld rounds=%ld rss_start_kb=%ld rss_warm_kb=%ld rss_end_kb=%ld "
           "rss_max_kb=%ld fds_warm=%d fds_end=%d fds_max_settled=%d connections_started=%llu goaways=%llu "
           "seconds=%.1f\n",
           count, accepted, rounds, rss_start, rss_warm, rss_end, rss_max_after, fds_warm, fds_end, fds_max_settled,
           (unsigned long long)stats.connections_started, (unsigned long long)stats.goaways, seconds);
    int failed = 0;
    if (accepted != count) {
        fprintf(stderr, "soak: FAILED: %ld of %ld accepted\n", accepted, count);
        failed = 1;
    }
    if (rss_max_after - rss_warm > max_growth_kb) {
        fprintf(stderr, "soak: FAILED: resident memory grew by %ld KiB after the warm-up (bound %ld KiB)\n",
                rss_max_after - rss_warm, max_growth_kb);
        failed = 1;
    }
    if (fd_growth) {
        fprintf(stderr, "soak: FAILED: open descriptors grew from %d (end of warm-up) to %d\n", fds_warm, fds_max_settled);
        failed = 1;
    }
    return failed;
}
