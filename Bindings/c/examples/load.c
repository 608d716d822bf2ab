/* load.c: sends many notifications through libswiftpush as fast as the client takes them and
 * reports throughput and outcomes. Used by `make demo` and `make bench`; also a starting point
 * for a high-rate C sender (batch send, batch poll, a bounded number in flight).
 *
 *   load --host localhost --port 2197 --ca ca.pem --key AuthKey.p8 --key-id ID --team-id TEAM
 *        --topic com.example.app [--count 100000] [--window 10000] [--connections 1]
 *        [--payload-bytes 200] [--token HEX] [--rate N] [--clients N] [--io-threads N]
 *        [--min-connections N] [--quiet]
 *
 * --rate paces sending at N notifications/s (latency under a given load); without it, the
 * client is kept as full as --window allows (throughput). --clients N opens N clients (each
 * with its own I/O thread and --connections connections) and spreads the batches over them;
 * --io-threads N opens each client with N I/O threads (PUSH_OPT_IO_THREADS), which share out
 * its --connections. --min-connections N (1 to --connections - 1) makes the pool size itself
 * between N and --connections (PUSH_OPT_MIN_CONNECTIONS).
 *
 * Last line (machine-readable):
 *   load-result sent=N accepted=N rejected=N failed=N seconds=S rate=R cpu_us_per_notification=C peak_rss_mb=M
 *               latency_p50_us=L latency_p99_us=L
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>

#include "swiftpush.h"

#define BATCH 512

static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double cpu_seconds(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static const char *arg(int argc, char **argv, const char *name, const char *fallback) {
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], name) == 0) return argv[i + 1];
    return fallback;
}

static int flag(int argc, char **argv, const char *name) {
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], name) == 0) return 1;
    return 0;
}

static int check(int32_t rc, const push_error *err, const char *what) {
    if (rc != PUSH_OK) {
        fprintf(stderr, "load: %s: %s (%s)\n", what, err->message, push_strerror(rc));
        return 0;
    }
    return 1;
}

int main(int argc, char **argv) {
    const char *host = arg(argc, argv, "--host", "localhost");
    long port = atol(arg(argc, argv, "--port", "2197"));
    const char *ca = arg(argc, argv, "--ca", NULL);
    const char *key = arg(argc, argv, "--key", NULL);
    const char *key_id = arg(argc, argv, "--key-id", "TESTKEY001");
    const char *team_id = arg(argc, argv, "--team-id", "TEAM123456");
    const char *topic = arg(argc, argv, "--topic", "com.example.app");
    long count = atol(arg(argc, argv, "--count", "100000"));
    long window = atol(arg(argc, argv, "--window", "10000"));
    long connections = atol(arg(argc, argv, "--connections", "1"));
    long min_connections = atol(arg(argc, argv, "--min-connections", "0"));
    long payload_bytes = atol(arg(argc, argv, "--payload-bytes", "200"));
    const char *token = arg(argc, argv, "--token",
                            "b6f1f6a2c3d4e5f60718293a4b5c6d7e8f90112233445566778899aabbccddee"); /* 64 hex digits */
    int quiet = flag(argc, argv, "--quiet");
    double pace = atof(arg(argc, argv, "--rate", "0"));
    long io_threads = atol(arg(argc, argv, "--io-threads", "1"));
    long nclients = atol(arg(argc, argv, "--clients", "1"));
    if (nclients < 1) nclients = 1;
    if (nclients > 16) nclients = 16;
    if (!key || count <= 0 || window <= 0) {
        fprintf(stderr, "usage: load --key AuthKey.p8 [--host H --port P --ca ca.pem --key-id ID --team-id T "
                        "--topic T --count N --window W --connections C --payload-bytes B --token HEX --rate N "
                        "--clients N --io-threads N --min-connections N --quiet]\n");
        return 2;
    }

    /* A payload of the requested size: an alert plus padding in a custom key. */
    char *payload = malloc((size_t)payload_bytes + 64);
    int head = snprintf(payload, 64, "{\"aps\":{\"alert\":\"Hello from swiftpush\"},\"pad\":\"");
    long pad = payload_bytes - head - 2;
    if (pad < 0) pad = 0;
    memset(payload + head, 'x', (size_t)pad);
    strcpy(payload + head + pad, "\"}");

    push_error err;
    push_config_t cfg = push_config_new();
    int ok = check(push_config_set_string(cfg, PUSH_OPT_HOST, host, 0, &err), &err, "host") &&
             check(push_config_set_int(cfg, PUSH_OPT_PORT, port, &err), &err, "port") &&
             (!ca || check(push_config_set_string(cfg, PUSH_OPT_CA_FILE, ca, 0, &err), &err, "CA file")) &&
             check(push_config_set_string(cfg, PUSH_OPT_TOKEN_KEY_FILE, key, 0, &err), &err, "key") &&
             check(push_config_set_string(cfg, PUSH_OPT_KEY_ID, key_id, 0, &err), &err, "key id") &&
             check(push_config_set_string(cfg, PUSH_OPT_TEAM_ID, team_id, 0, &err), &err, "team id") &&
             check(push_config_set_string(cfg, PUSH_OPT_DEFAULT_TOPIC, topic, 0, &err), &err, "topic") &&
             check(push_config_set_int(cfg, PUSH_OPT_CONNECTIONS, connections, &err), &err, "connections") &&
             (min_connections == 0 || /* set only when asked: an older library does not know it */
              check(push_config_set_int(cfg, PUSH_OPT_MIN_CONNECTIONS, min_connections, &err), &err, "min connections")) &&
             check(push_config_set_int(cfg, PUSH_OPT_IO_THREADS, io_threads, &err), &err, "I/O threads") &&
             check(push_config_set_int(cfg, PUSH_OPT_QUEUE_CAPACITY, window + BATCH, &err), &err, "queue");
    push_client_t clients[16] = {NULL};
    for (long c = 0; ok && c < nclients; c++) ok = check(push_client_open(cfg, &clients[c], &err), &err, "open");
    push_config_free(cfg);
    for (long c = 0; ok && c < nclients; c++) ok = check(push_client_wait_connected(clients[c], 10000, &err), &err, "connect");
    if (!ok) {
        for (long c = 0; c < nclients; c++) push_client_free(clients[c]);
        return 1;
    }

    push_notification batch[BATCH];
    memset(batch, 0, sizeof batch);
    for (int i = 0; i < BATCH; i++) {
        batch[i].struct_size = sizeof(push_notification);
        batch[i].push_type = PUSH_TYPE_ALERT;
        batch[i].device_token = token;
        batch[i].payload = payload;
        batch[i].payload_len = strlen(payload);
    }
    static push_result results[BATCH];
    long sent = 0, done = 0, by_outcome[4] = {0, 0, 0, 0};
    long by_reason[1001] = {0};
    double start = now_seconds(), cpu_start = cpu_seconds(), last_report = start;

    for (long turn = 0; done < count; turn++) {
        push_client_t client = clients[turn % nclients];
        long room = window - (sent - done);
        if (pace > 0) { /* no further ahead than the pace allows */
            long allowed = (long)((now_seconds() - start) * pace) + 1 - sent;
            if (allowed < room) room = allowed;
        }
        if (sent < count && room > 0) {
            long n = count - sent;
            if (n > room) n = room;
            if (n > BATCH) n = BATCH;
            for (long i = 0; i < n; i++) batch[i].tag = (uint64_t)(sent + i);
            ptrdiff_t accepted = 0;
            int32_t rc = push_client_send_batch(client, batch, (ptrdiff_t)n, 0, &accepted, &err);
            sent += accepted;
            if (rc != PUSH_OK && rc != PUSH_E_QUEUE_FULL) {
                fprintf(stderr, "load: send: %s\n", err.message);
                break;
            }
        }
        ptrdiff_t got = 0;
        int wait = (sent >= count || sent - done >= window) ? 100 : (pace > 0 && room <= 0) ? 1 : 0;
        push_client_poll(client, results, BATCH, sizeof(push_result), nclients > 1 && wait ? 1 : wait, &got);
        for (ptrdiff_t i = 0; i < got; i++) {
            int o = results[i].outcome;
            by_outcome[(o >= 1 && o <= 3) ? o : 0]++;
            int r = results[i].reason;
            by_reason[(r >= 0 && r <= 1000) ? r : 1000]++;
            if (o != PUSH_OUTCOME_ACCEPTED && by_outcome[o] <= 3)
                fprintf(stderr, "load: notification %llu: outcome %d status %d reason %s (%s)\n",
                        (unsigned long long)results[i].tag, o, results[i].status,
                        push_reason_name(results[i].reason), results[i].reason_text);
        }
        done += got;
        double t = now_seconds();
        if (!quiet && t - last_report >= 1.0) {
            fprintf(stderr, "  %ld/%ld done, %.0f/s\n", done, count, (double)done / (t - start));
            last_report = t;
        }
    }
    double seconds = now_seconds() - start;
    double cpu = cpu_seconds() - cpu_start;
    push_stats stats;
    memset(&stats, 0, sizeof stats);
    push_client_stats(clients[0], &stats, sizeof stats);
    for (long c = 0; c < nclients; c++) {
        push_client_close(clients[c], 5000);
        /* Anything that ended during close (there should be nothing left). */
        ptrdiff_t got = 0;
        while (push_client_poll(clients[c], results, BATCH, sizeof(push_result), 0, &got) == PUSH_OK && got > 0) {
            for (ptrdiff_t i = 0; i < got; i++) by_outcome[results[i].outcome]++;
            done += got;
        }
        push_client_free(clients[c]);
    }
    free(payload);

    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("notifications: %ld sent, %ld accepted, %ld rejected, %ld failed\n", sent, by_outcome[1], by_outcome[2],
           by_outcome[3]);
    for (int r = 1; r <= 1000; r++)
        if (by_reason[r]) printf("  reason %s: %ld\n", push_reason_name(r), by_reason[r]);
    printf("load-result sent=%ld accepted=%ld rejected=%ld failed=%ld seconds=%.3f rate=%.0f "
           "cpu_us_per_notification=%.2f peak_rss_mb=%.1f latency_p50_us=%lld latency_p99_us=%lld\n",
           sent, by_outcome[1], by_outcome[2], by_outcome[3], seconds, (double)done / seconds,
           cpu * 1e6 / (double)(done ? done : 1), (double)ru.ru_maxrss / 1024.0,
           (long long)stats.latency_p50_us, (long long)stats.latency_p99_us);
    return (by_outcome[1] == count) ? 0 : 1;
}
