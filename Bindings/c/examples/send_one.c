/* send_one.c: the smallest complete program that sends one notification with libswiftpush:
 * build a payload, open a client with token authentication, send, wait for the outcome.
 *
 *   send_one KEY.p8 KEY_ID TEAM_ID TOPIC DEVICE_TOKEN [HOST PORT CA_FILE]
 *
 * HOST defaults to api.push.apple.com (use api.sandbox.push.apple.com for development builds of
 * the app), PORT to 443, CA_FILE to the system trust store. Build:
 *   cc -std=c11 -IInclude send_one.c -Lpath/to/lib -lswiftpush -o send_one
 * Exit status: 0 accepted, 1 rejected or failed, 2 usage or setup error. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "swiftpush.h"

static int setup_failed(const char *what, const push_error *err) {
    fprintf(stderr, "send_one: %s: %s (%s)\n", what, err->message, push_strerror(err->code));
    return 2;
}

int main(int argc, char **argv) {
    if (argc != 6 && argc != 9) {
        fprintf(stderr, "usage: send_one KEY.p8 KEY_ID TEAM_ID TOPIC DEVICE_TOKEN [HOST PORT CA_FILE]\n");
        return 2;
    }
    const char *key = argv[1], *key_id = argv[2], *team_id = argv[3], *topic = argv[4], *token = argv[5];
    push_error err;

    /* 1. The payload: {"aps":{"alert":{"title":...,"body":...},"sound":"default"}}, escaped for us. */
    char json[4097]; /* the alert limit, 4096 bytes, plus the NUL */
    ptrdiff_t json_len = 0;
    push_payload_t payload = push_payload_new();
    int ok = push_payload_set_string(payload, PUSH_PAYLOAD_ALERT_TITLE, "Hello", PUSH_NUL_TERMINATED, &err) == PUSH_OK &&
             push_payload_set_string(payload, PUSH_PAYLOAD_ALERT_BODY, "from \"swiftpush\" \xe2\x9c\x93", 0, &err) == PUSH_OK &&
             push_payload_set_string(payload, PUSH_PAYLOAD_SOUND, "default", 0, &err) == PUSH_OK &&
             push_payload_build(payload, json, sizeof json, &json_len, &err) == PUSH_OK;
    push_payload_free(payload);
    if (!ok) return setup_failed("payload", &err);

    /* 2. A client: the host and credentials. It connects in the background. */
    push_config_t cfg = push_config_new();
    ok = push_config_set_string(cfg, PUSH_OPT_TOKEN_KEY_FILE, key, 0, &err) == PUSH_OK &&
         push_config_set_string(cfg, PUSH_OPT_KEY_ID, key_id, 0, &err) == PUSH_OK &&
         push_config_set_string(cfg, PUSH_OPT_TEAM_ID, team_id, 0, &err) == PUSH_OK;
    if (ok && argc == 9)
        ok = push_config_set_string(cfg, PUSH_OPT_HOST, argv[6], 0, &err) == PUSH_OK &&
             push_config_set_int(cfg, PUSH_OPT_PORT, atol(argv[7]), &err) == PUSH_OK &&
             push_config_set_string(cfg, PUSH_OPT_CA_FILE, argv[8], 0, &err) == PUSH_OK;
    push_client_t client = NULL;
    if (ok) ok = push_client_open(cfg, &client, &err) == PUSH_OK;
    push_config_free(cfg);
    if (!ok) return setup_failed("client", &err);

    /* 3. Send: everything is copied during the call. */
    push_notification n;
    memset(&n, 0, sizeof n);
    n.struct_size = sizeof n;
    n.push_type = PUSH_TYPE_ALERT;
    n.device_token = token;
    n.topic = topic;
    n.payload = json;
    n.payload_len = (size_t)json_len;
    if (push_client_send(client, &n, -1, &err) != PUSH_OK) {
        push_client_free(client);
        return setup_failed("send", &err);
    }

    /* 4. Its outcome: every notification sent gets exactly one result, at the latest when its
     *    deadline (PUSH_OPT_DEADLINE_MS, 60 s by default) passes. */
    push_result r;
    ptrdiff_t got = 0;
    while (got == 0 && push_client_poll(client, &r, 1, sizeof r, -1, &got) == PUSH_OK) {}
    int accepted = got == 1 && r.outcome == PUSH_OUTCOME_ACCEPTED;
    if (accepted)
        printf("ACCEPTED apns-id=%s\n", r.apns_id);
    else if (got == 1) /* REJECTED: APNs said no (don't resend); FAILED: no answer (may be retried) */
        printf("%s %d %s apns-id=%s (%s)\n", r.outcome == PUSH_OUTCOME_REJECTED ? "REJECTED" : "FAILED", r.status,
               push_reason_name(r.reason), r.apns_id, r.reason_text);
    push_client_close(client, 1000);
    push_client_free(client);
    return accepted ? 0 : 1;
}
