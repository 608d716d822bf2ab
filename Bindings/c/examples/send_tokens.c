/* send_tokens.c: a high-rate sender for a file of device tokens, with results delivered by
 * callback (the other model besides polling; see load.c for a poll loop).
 *
 *   send_tokens TOKENS_FILE PAYLOAD_JSON TOPIC KEY.p8 KEY_ID TEAM_ID [HOST PORT CA_FILE]
 *
 * Sends PAYLOAD_JSON to every token in TOKENS_FILE (one hex token per line, blank lines and
 * lines starting with # skipped) in batches, then prints a summary and, for each token APNs
 * reported as no longer valid (410), a line "unregistered TOKEN TIMESTAMP_MS" so the caller can
 * stop sending to it. Exit status: 0 when every notification was accepted, 1 otherwise, 2 for
 * usage or setup errors. */
#define _POSIX_C_SOURCE 200809L
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "swiftpush.h"

/* What the callback records; it runs on the client's I/O thread, so the counters are atomic and
 * each token's outcome slot is written by that thread only, read after close. */
struct outcomes {
    atomic_long done, accepted, rejected, failed;
    int64_t *unregistered_at; /* per token (by tag): 410 timestamp, 0 if none */
};

static void on_results(void *user_data, const push_result *results, ptrdiff_t count) {
    struct outcomes *o = user_data;
    for (ptrdiff_t i = 0; i < count; i++) {
        const push_result *r = &results[i];
        if (r->outcome == PUSH_OUTCOME_ACCEPTED) atomic_fetch_add(&o->accepted, 1);
        else if (r->outcome == PUSH_OUTCOME_REJECTED) atomic_fetch_add(&o->rejected, 1);
        else atomic_fetch_add(&o->failed, 1);
        if (r->status == 410) o->unregistered_at[r->tag] = r->timestamp_ms ? r->timestamp_ms : 1;
    }
    atomic_fetch_add(&o->done, count);
}

static char **read_tokens(const char *path, long *count) {
    FILE *f = fopen(path, "r");
    if (!f) return NULL;
    long cap = 1024, n = 0;
    char **tokens = malloc((size_t)cap * sizeof *tokens);
    char line[1024];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = 0;
        if (!line[0] || line[0] == '#') continue;
        if (n == cap) tokens = realloc(tokens, (size_t)(cap *= 2) * sizeof *tokens);
        tokens[n++] = strdup(line);
    }
    fclose(f);
    *count = n;
    return tokens;
}

int main(int argc, char **argv) {
    if (argc != 7 && argc != 10) {
        fprintf(stderr, "usage: send_tokens TOKENS_FILE PAYLOAD_JSON TOPIC KEY.p8 KEY_ID TEAM_ID [HOST PORT CA_FILE]\n");
        return 2;
    }
    long count = 0;
    char **tokens = read_tokens(argv[1], &count);
    if (!tokens) { perror(argv[1]); return 2; }
    struct outcomes o = {0};
    o.unregistered_at = calloc((size_t)count + 1, sizeof *o.unregistered_at);

    push_error err;
    push_config_t cfg = push_config_new();
    int ok = push_config_set_string(cfg, PUSH_OPT_TOKEN_KEY_FILE, argv[4], 0, &err) == PUSH_OK &&
             push_config_set_string(cfg, PUSH_OPT_KEY_ID, argv[5], 0, &err) == PUSH_OK &&
             push_config_set_string(cfg, PUSH_OPT_TEAM_ID, argv[6], 0, &err) == PUSH_OK &&
             push_config_set_string(cfg, PUSH_OPT_DEFAULT_TOPIC, argv[3], 0, &err) == PUSH_OK &&
             push_config_set_result_callback(cfg, on_results, &o, &err) == PUSH_OK;
    if (ok && argc == 10)
        ok = push_config_set_string(cfg, PUSH_OPT_HOST, argv[7], 0, &err) == PUSH_OK &&
             push_config_set_int(cfg, PUSH_OPT_PORT, atol(argv[8]), &err) == PUSH_OK &&
             push_config_set_string(cfg, PUSH_OPT_CA_FILE, argv[9], 0, &err) == PUSH_OK;
    push_client_t client = NULL;
    if (ok) ok = push_client_open(cfg, &client, &err) == PUSH_OK;
    push_config_free(cfg);
    if (!ok) { fprintf(stderr, "send_tokens: %s\n", err.message); return 2; }

    /* Batches of 512; a full queue makes the send wait (up to 10 s) while results drain. */
    enum { BATCH = 512 };
    static push_notification batch[BATCH];
    long sent = 0, refused = 0;
    while (sent + refused < count) {
        ptrdiff_t n = 0;
        for (long i = sent + refused; i < count && n < BATCH; i++, n++) {
            memset(&batch[n], 0, sizeof batch[n]);
            batch[n].struct_size = sizeof batch[n];
            batch[n].device_token = tokens[i];
            batch[n].payload = argv[2];
            batch[n].tag = (uint64_t)i;
        }
        ptrdiff_t accepted = 0;
        int32_t rc = push_client_send_batch(client, batch, n, 10000, &accepted, &err);
        sent += accepted;
        if (rc != PUSH_OK) {
            if (rc == PUSH_E_QUEUE_FULL || rc == PUSH_E_CLOSED) { fprintf(stderr, "send_tokens: %s\n", err.message); break; }
            /* A bad token or payload: report it and go on with the next notification. */
            fprintf(stderr, "send_tokens: line for token %s: %s\n", tokens[sent + refused], err.message);
            refused++;
        }
    }
    push_client_close(client, 30000); /* every result has been delivered when this returns */
    push_client_free(client);

    printf("%ld tokens: %ld sent (%ld refused locally), %ld accepted, %ld rejected, %ld failed\n", count, sent,
           refused, atomic_load(&o.accepted), atomic_load(&o.rejected), atomic_load(&o.failed));
    for (long i = 0; i < count; i++)
        if (o.unregistered_at[i]) printf("unregistered %s %lld\n", tokens[i], (long long)o.unregistered_at[i]);
    int all_accepted = atomic_load(&o.accepted) == count;
    for (long i = 0; i < count; i++) free(tokens[i]);
    free(tokens);
    free(o.unregistered_at);
    return all_accepted ? 0 : 1;
}
