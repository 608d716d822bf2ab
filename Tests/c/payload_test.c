/* Tests of the payload builder and topic helper through the C ABI: every field, escaping,
 * errors, buffer sizes and limits. Needs no server. Compiled with -Wall -Wextra -Werror against
 * Include/swiftpush.h and run by Tests/c/run.sh; prints one line per test and
 * "N passed, N failed" at the end. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "swiftpush.h"
#include "test_support.h"


/* Builds `p` into a static buffer; returns "" (and the status in *rc) on failure. */
static const char *build(push_payload_t p, int32_t *rc, push_error *err) {
    static char buf[8192];
    ptrdiff_t len = -1;
    int32_t r = push_payload_build(p, buf, sizeof buf, &len, err);
    if (rc) *rc = r;
    if (r != PUSH_OK) return "";
    if ((size_t)len != strlen(buf)) return "<length mismatch>";
    return buf;
}

/* Checks that `p` builds to exactly `expected`. */
static int builds_to(push_payload_t p, const char *expected, int line) {
    push_error err;
    int32_t rc;
    const char *got = build(p, &rc, &err);
    if (rc != PUSH_OK || strcmp(got, expected) != 0) {
        printf("    line %d: expected %s\n    got      %s (rc %d: %s)\n", line, expected, got, rc,
               rc ? err.message : "");
        return 0;
    }
    return 1;
}
#define BUILDS_TO(p, expected) (ok = builds_to((p), (expected), __LINE__) && ok)

static void test_an_empty_payload_builds_to_an_empty_aps(void) {
    int ok = 1;
    push_payload_t p = push_payload_new();
    EXPECT(p != NULL, "push_payload_new returned NULL");
    BUILDS_TO(p, "{\"aps\":{}}");
    push_payload_free(p);
    report("an empty payload builds to {\"aps\":{}}", ok);
}

static void test_every_string_field_lands_under_its_key(void) {
    int ok = 1;
    push_error err;
    push_payload_t p = push_payload_new();
    static const struct { int32_t field; const char *value; } fields[] = {
        {PUSH_PAYLOAD_ALERT_TITLE, "T"}, {PUSH_PAYLOAD_ALERT_SUBTITLE, "S"}, {PUSH_PAYLOAD_ALERT_BODY, "B"},
        {PUSH_PAYLOAD_ALERT_LAUNCH_IMAGE, "L.png"}, {PUSH_PAYLOAD_ALERT_TITLE_LOC_KEY, "TK"},
        {PUSH_PAYLOAD_ALERT_SUBTITLE_LOC_KEY, "SK"}, {PUSH_PAYLOAD_ALERT_LOC_KEY, "BK"},
        {PUSH_PAYLOAD_SOUND, "default"}, {PUSH_PAYLOAD_THREAD_ID, "th"}, {PUSH_PAYLOAD_CATEGORY, "cat"},
        {PUSH_PAYLOAD_TARGET_CONTENT_ID, "tc"}, {PUSH_PAYLOAD_INTERRUPTION_LEVEL, "time-sensitive"},
        {PUSH_PAYLOAD_FILTER_CRITERIA, "fc"}, {PUSH_PAYLOAD_EVENT, "update"}, {PUSH_PAYLOAD_ATTRIBUTES_TYPE, "AT"},
    };
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        int32_t rc = push_payload_set_string(p, fields[i].field, fields[i].value, PUSH_NUL_TERMINATED, &err);
        EXPECT(rc == PUSH_OK && err.code == 0, "field %d: %s", fields[i].field, err.message);
    }
    EXPECT(push_payload_add_loc_arg(p, PUSH_PAYLOAD_ALERT_TITLE_LOC_ARGS, "a", 0, &err) == PUSH_OK, "%s", err.message);
    EXPECT(push_payload_add_loc_arg(p, PUSH_PAYLOAD_ALERT_SUBTITLE_LOC_ARGS, "b", 0, &err) == PUSH_OK, "%s", err.message);
    EXPECT(push_payload_add_loc_arg(p, PUSH_PAYLOAD_ALERT_LOC_ARGS, "c", 0, &err) == PUSH_OK, "%s", err.message);
    EXPECT(push_payload_add_loc_arg(p, PUSH_PAYLOAD_ALERT_LOC_ARGS, "d", 0, &err) == PUSH_OK, "%s", err.message);
    BUILDS_TO(p, "{\"aps\":{\"alert\":{\"title\":\"T\",\"subtitle\":\"S\",\"body\":\"B\",\"launch-image\":\"L.png\","
                 "\"title-loc-key\":\"TK\",\"title-loc-args\":[\"a\"],\"subtitle-loc-key\":\"SK\","
                 "\"subtitle-loc-args\":[\"b\"],\"loc-key\":\"BK\",\"loc-args\":[\"c\",\"d\"]},"
                 "\"sound\":\"default\",\"thread-id\":\"th\",\"category\":\"cat\",\"target-content-id\":\"tc\","
                 "\"interruption-level\":\"time-sensitive\",\"filter-criteria\":\"fc\",\"event\":\"update\","
                 "\"attributes-type\":\"AT\"}}");
    push_payload_free(p);
    report("every string field and loc-args list lands under its key, in a fixed order", ok);
}

static void test_numbers_sounds_raw_and_custom_values(void) {
    int ok = 1;
    push_error err;
    push_payload_t p = push_payload_new();
    EXPECT(push_payload_set_int(p, PUSH_PAYLOAD_BADGE, 3, &err) == PUSH_OK, "%s", err.message);
    EXPECT(push_payload_set_int(p, PUSH_PAYLOAD_CONTENT_AVAILABLE, 1, &err) == PUSH_OK, "%s", err.message);
    EXPECT(push_payload_set_int(p, PUSH_PAYLOAD_MUTABLE_CONTENT, 1, &err) == PUSH_OK, "%s", err.message);
    EXPECT(push_payload_set_int(p, PUSH_PAYLOAD_TIMESTAMP, 1700000000, &err) == PUSH_OK, "%s", err.message);
    EXPECT(push_payload_set_int(p, PUSH_PAYLOAD_STALE_DATE, 1700000600, &err) == PUSH_OK, "%s", err.message);
    EXPECT(push_payload_set_int(p, PUSH_PAYLOAD_DISMISSAL_DATE, 1700003600, &err) == PUSH_OK, "%s", err.message);
    EXPECT(push_payload_set_double(p, PUSH_PAYLOAD_RELEVANCE_SCORE, 0.25, &err) == PUSH_OK, "%s", err.message);
    EXPECT(push_payload_set_critical_sound(p, "alarm.caf", 0, 0.5, &err) == PUSH_OK, "%s", err.message);
    EXPECT(push_payload_set_raw(p, PUSH_PAYLOAD_CONTENT_STATE, " {\"score\": 1.50} ", 0, &err) == PUSH_OK, "%s", err.message);
    EXPECT(push_payload_set_raw(p, PUSH_PAYLOAD_ATTRIBUTES, "{\"a\":[1,2]}", 0, &err) == PUSH_OK, "%s", err.message);
    EXPECT(push_payload_set_custom(p, "z", 0, "1e3", 0, &err) == PUSH_OK, "%s", err.message);
    EXPECT(push_payload_set_custom(p, "a", 0, "{\"x\":null}", 0, &err) == PUSH_OK, "%s", err.message);
    BUILDS_TO(p, "{\"aps\":{\"badge\":3,\"sound\":{\"critical\":1,\"name\":\"alarm.caf\",\"volume\":0.5},"
                 "\"content-available\":1,\"mutable-content\":1,\"relevance-score\":0.25,\"timestamp\":1700000000,"
                 "\"content-state\":{\"score\": 1.50},\"stale-date\":1700000600,\"dismissal-date\":1700003600,"
                 "\"attributes\":{\"a\":[1,2]}},\"z\":1e3,\"a\":{\"x\":null}}");
    /* content-available 0 leaves the key out; a plain sound replaces the critical one. */
    EXPECT(push_payload_set_int(p, PUSH_PAYLOAD_CONTENT_AVAILABLE, 0, &err) == PUSH_OK, "%s", err.message);
    EXPECT(push_payload_set_string(p, PUSH_PAYLOAD_SOUND, "ping.aiff", 0, &err) == PUSH_OK, "%s", err.message);
    EXPECT(strstr(build(p, NULL, &err), "\"sound\":\"ping.aiff\",\"mutable-content\":1") != NULL, "%s", build(p, NULL, &err));
    push_payload_free(p);
    report("integers, the relevance score, a critical sound, raw objects and custom keys are written as given", ok);
}

static void test_text_is_escaped_as_json_requires(void) {
    int ok = 1;
    push_error err;
    push_payload_t p = push_payload_new();
    /* Non-ASCII and emoji stay UTF-8; quotes, backslash, controls, U+2028/2029 are escaped. */
    const char *title = "caf\xc3\xa9 \xf0\x9f\x91\x8d \xe6\x97\xa5\xe6\x9c\xac";
    const char body[] = "say \"hi\" \\ \n\t\x01 \xe2\x80\xa8|\xe2\x80\xa9 end";
    EXPECT(push_payload_set_string(p, PUSH_PAYLOAD_ALERT_TITLE, title, 0, &err) == PUSH_OK, "%s", err.message);
    EXPECT(push_payload_set_string(p, PUSH_PAYLOAD_ALERT_BODY, body, 0, &err) == PUSH_OK, "%s", err.message);
    /* An explicit length carries an embedded NUL, written as \u0000. */
    EXPECT(push_payload_set_string(p, PUSH_PAYLOAD_THREAD_ID, "a\0b", 3, &err) == PUSH_OK, "%s", err.message);
    EXPECT(push_payload_set_custom(p, "k\"ey", 0, "\"v\"", 0, &err) == PUSH_OK, "%s", err.message);
    BUILDS_TO(p, "{\"aps\":{\"alert\":{\"title\":\"caf\xc3\xa9 \xf0\x9f\x91\x8d \xe6\x97\xa5\xe6\x9c\xac\","
                 "\"body\":\"say \\\"hi\\\" \\\\ \\n\\t\\u0001 \\u2028|\\u2029 end\"},\"thread-id\":\"a\\u0000b\"},"
                 "\"k\\\"ey\":\"v\"}");
    /* A length shorter than the string takes a prefix. */
    EXPECT(push_payload_set_string(p, PUSH_PAYLOAD_ALERT_BODY, "abcdef", 3, &err) == PUSH_OK, "%s", err.message);
    EXPECT(strstr(build(p, NULL, &err), "\"body\":\"abc\"") != NULL, "%s", build(p, NULL, &err));
    push_payload_free(p);
    report("text is escaped as JSON requires: UTF-8 kept, quotes, controls and U+2028/9 escaped", ok);
}

static void test_bad_values_are_refused_and_leave_the_payload_unchanged(void) {
    int ok = 1;
    push_error err;
    int32_t rc;
    push_payload_t p = push_payload_new();
    push_payload_set_string(p, PUSH_PAYLOAD_ALERT_TITLE, "kept", 0, &err);
    rc = push_payload_set_string(p, PUSH_PAYLOAD_ALERT_TITLE, "a\xff", 0, &err);
    EXPECT(rc == PUSH_E_BAD_PAYLOAD && err.code == rc && strstr(err.message, "title is not valid UTF-8 (byte 1)"),
           "%d %s", rc, err.message);
    rc = push_payload_set_string(p, PUSH_PAYLOAD_INTERRUPTION_LEVEL, "urgent", 0, &err);
    EXPECT(rc == PUSH_E_BAD_PAYLOAD && strstr(err.message, "interruption-level must be"), "%d %s", rc, err.message);
    rc = push_payload_set_string(p, PUSH_PAYLOAD_EVENT, "begin", 0, &err);
    EXPECT(rc == PUSH_E_BAD_PAYLOAD && strstr(err.message, "event must be start, update or end"), "%d %s", rc, err.message);
    rc = push_payload_set_double(p, PUSH_PAYLOAD_RELEVANCE_SCORE, 1.5, &err);
    EXPECT(rc == PUSH_E_BAD_PAYLOAD && strstr(err.message, "relevance-score must be between 0 and 1"), "%d %s", rc, err.message);
    rc = push_payload_set_critical_sound(p, "a", 0, -0.5, &err);
    EXPECT(rc == PUSH_E_BAD_PAYLOAD && strstr(err.message, "volume"), "%d %s", rc, err.message);
    rc = push_payload_set_int(p, PUSH_PAYLOAD_BADGE, -1, &err);
    EXPECT(rc == PUSH_E_BAD_PAYLOAD && strstr(err.message, "badge must be 0 or more"), "%d %s", rc, err.message);
    rc = push_payload_set_int(p, PUSH_PAYLOAD_MUTABLE_CONTENT, 2, &err);
    EXPECT(rc == PUSH_E_BAD_PAYLOAD, "%d %s", rc, err.message);
    rc = push_payload_set_raw(p, PUSH_PAYLOAD_CONTENT_STATE, "{\"a\":}", 0, &err);
    EXPECT(rc == PUSH_E_BAD_PAYLOAD && strstr(err.message, "content-state: not valid JSON") && strstr(err.message, "byte 5"),
           "%d %s", rc, err.message);
    rc = push_payload_set_raw(p, PUSH_PAYLOAD_ATTRIBUTES, "[]", 0, &err);
    EXPECT(rc == PUSH_E_BAD_PAYLOAD && strstr(err.message, "attributes must be a JSON object"), "%d %s", rc, err.message);
    rc = push_payload_set_custom(p, "aps", 0, "{}", 0, &err);
    EXPECT(rc == PUSH_E_BAD_PAYLOAD && strstr(err.message, "\"aps\" is not allowed"), "%d %s", rc, err.message);
    EXPECT(push_payload_set_custom(p, "k", 0, "1", 0, &err) == PUSH_OK, "%s", err.message);
    rc = push_payload_set_custom(p, "k", 0, "2", 0, &err);
    EXPECT(rc == PUSH_E_BAD_PAYLOAD && strstr(err.message, "already set"), "%d %s", rc, err.message);
    rc = push_payload_set_custom(p, "v", 0, "{'a':1}", 0, &err);
    EXPECT(rc == PUSH_E_BAD_PAYLOAD && strstr(err.message, "not valid JSON"), "%d %s", rc, err.message);
    BUILDS_TO(p, "{\"aps\":{\"alert\":{\"title\":\"kept\"}},\"k\":1}");
    push_payload_free(p);
    report("bad values are refused with PUSH_E_BAD_PAYLOAD and a message, leaving the payload unchanged", ok);
}

static void test_argument_errors(void) {
    int ok = 1;
    push_error err;
    int32_t rc;
    ptrdiff_t len = 99;
    push_payload_t p = push_payload_new();
    rc = push_payload_set_string(NULL, PUSH_PAYLOAD_ALERT_BODY, "x", 0, &err);
    EXPECT(rc == PUSH_E_INVALID_ARGUMENT && strstr(err.message, "NULL"), "%d %s", rc, err.message);
    rc = push_payload_set_string(p, PUSH_PAYLOAD_BADGE, "1", 0, &err);
    EXPECT(rc == PUSH_E_INVALID_ARGUMENT && strstr(err.message, "not a string field"), "%d %s", rc, err.message);
    rc = push_payload_set_int(p, PUSH_PAYLOAD_ALERT_TITLE, 1, &err);
    EXPECT(rc == PUSH_E_INVALID_ARGUMENT && strstr(err.message, "not an integer field"), "%d %s", rc, err.message);
    rc = push_payload_set_double(p, PUSH_PAYLOAD_BADGE, 1, &err);
    EXPECT(rc == PUSH_E_INVALID_ARGUMENT, "%d %s", rc, err.message);
    rc = push_payload_set_raw(p, PUSH_PAYLOAD_ALERT_BODY, "{}", 0, &err);
    EXPECT(rc == PUSH_E_INVALID_ARGUMENT, "%d %s", rc, err.message);
    rc = push_payload_add_loc_arg(p, PUSH_PAYLOAD_ALERT_LOC_KEY, "x", 0, &err);
    EXPECT(rc == PUSH_E_INVALID_ARGUMENT && strstr(err.message, "not a loc-args list"), "%d %s", rc, err.message);
    rc = push_payload_add_loc_arg(p, PUSH_PAYLOAD_ALERT_LOC_ARGS, NULL, 0, &err);
    EXPECT(rc == PUSH_E_INVALID_ARGUMENT, "%d %s", rc, err.message);
    rc = push_payload_set_custom(p, NULL, 0, "1", 0, &err);
    EXPECT(rc == PUSH_E_INVALID_ARGUMENT, "%d %s", rc, err.message);
    rc = push_payload_set_string(p, PUSH_PAYLOAD_ALERT_BODY, "x", -1, &err);
    EXPECT(rc == PUSH_E_INVALID_ARGUMENT, "%d %s", rc, err.message);
    rc = push_payload_clear(p, 999, &err);
    EXPECT(rc == PUSH_E_INVALID_ARGUMENT, "%d %s", rc, err.message);
    rc = push_payload_build(NULL, NULL, 0, &len, &err);
    EXPECT(rc == PUSH_E_INVALID_ARGUMENT && len == 0, "%d %td", rc, len);
    rc = push_payload_build(p, NULL, 0, NULL, &err);
    EXPECT(rc == PUSH_E_INVALID_ARGUMENT, "%d %s", rc, err.message);
    /* A config handle is not a payload handle. */
    push_config_t cfg = push_config_new();
    rc = push_payload_set_int((push_payload_t)(void *)cfg, PUSH_PAYLOAD_BADGE, 1, &err);
    EXPECT(rc == PUSH_E_INVALID_ARGUMENT, "%d %s", rc, err.message);
    push_config_free(cfg);
    /* err may be NULL; free accepts NULL. */
    EXPECT(push_payload_set_int(p, PUSH_PAYLOAD_BADGE, -5, NULL) == PUSH_E_BAD_PAYLOAD, "NULL err");
    push_payload_free(NULL);
    push_payload_free(p);
    report("wrong handles, wrong field kinds and NULL arguments are PUSH_E_INVALID_ARGUMENT", ok);
}

static void test_null_values_and_clear_remove_fields(void) {
    int ok = 1;
    push_error err;
    push_payload_t p = push_payload_new();
    push_payload_set_string(p, PUSH_PAYLOAD_ALERT_BODY, "b", 0, &err);
    push_payload_set_string(p, PUSH_PAYLOAD_ALERT_LOC_KEY, "k", 0, &err);
    push_payload_add_loc_arg(p, PUSH_PAYLOAD_ALERT_LOC_ARGS, "x", 0, &err);
    push_payload_set_int(p, PUSH_PAYLOAD_BADGE, 0, &err);
    push_payload_set_double(p, PUSH_PAYLOAD_RELEVANCE_SCORE, 1, &err);
    push_payload_set_critical_sound(p, "s", 0, 1, &err);
    push_payload_set_raw(p, PUSH_PAYLOAD_CONTENT_STATE, "{}", 0, &err);
    BUILDS_TO(p, "{\"aps\":{\"alert\":{\"body\":\"b\",\"loc-key\":\"k\",\"loc-args\":[\"x\"]},\"badge\":0,"
                 "\"sound\":{\"critical\":1,\"name\":\"s\",\"volume\":1.0},\"relevance-score\":1.0,\"content-state\":{}}}");
    EXPECT(push_payload_set_string(p, PUSH_PAYLOAD_ALERT_BODY, NULL, 0, &err) == PUSH_OK, "%s", err.message);
    EXPECT(push_payload_set_raw(p, PUSH_PAYLOAD_CONTENT_STATE, NULL, 0, &err) == PUSH_OK, "%s", err.message);
    EXPECT(push_payload_clear(p, PUSH_PAYLOAD_ALERT_LOC_ARGS, &err) == PUSH_OK, "%s", err.message);
    EXPECT(push_payload_clear(p, PUSH_PAYLOAD_BADGE, &err) == PUSH_OK, "%s", err.message);
    EXPECT(push_payload_clear(p, PUSH_PAYLOAD_RELEVANCE_SCORE, &err) == PUSH_OK, "%s", err.message);
    EXPECT(push_payload_clear(p, PUSH_PAYLOAD_SOUND, &err) == PUSH_OK, "%s", err.message);
    BUILDS_TO(p, "{\"aps\":{\"alert\":{\"loc-key\":\"k\"}}}");
    EXPECT(push_payload_clear(p, PUSH_PAYLOAD_ALERT_LOC_KEY, &err) == PUSH_OK, "%s", err.message);
    BUILDS_TO(p, "{\"aps\":{}}");
    push_payload_free(p);
    report("a NULL value and push_payload_clear remove fields", ok);
}

static void test_build_reports_the_size_and_refuses_small_buffers(void) {
    int ok = 1;
    push_error err;
    push_payload_t p = push_payload_new();
    push_payload_set_string(p, PUSH_PAYLOAD_ALERT_BODY, "hello", 0, &err);
    const char *expected = "{\"aps\":{\"alert\":{\"body\":\"hello\"}}}";
    ptrdiff_t n = (ptrdiff_t)strlen(expected), len = -1;
    EXPECT(push_payload_build(p, NULL, 0, &len, &err) == PUSH_OK && len == n, "size query gave %td", len);
    char buf[64];
    memset(buf, '#', sizeof buf);
    len = -1;
    int32_t rc = push_payload_build(p, buf, n, &len, &err);
    EXPECT(rc == PUSH_E_BUFFER_TOO_SMALL && len == n && buf[0] == '#', "rc %d len %td", rc, len);
    EXPECT(strstr(err.message, "needs") != NULL, "%s", err.message);
    rc = push_payload_build(p, buf, n + 1, &len, &err);
    EXPECT(rc == PUSH_OK && len == n && strcmp(buf, expected) == 0 && buf[n + 1] == '#', "rc %d %s", rc, buf);
    /* loc-args without the loc key is caught at build. */
    push_payload_add_loc_arg(p, PUSH_PAYLOAD_ALERT_TITLE_LOC_ARGS, "x", 0, &err);
    rc = push_payload_build(p, buf, sizeof buf, &len, &err);
    EXPECT(rc == PUSH_E_BAD_PAYLOAD && strstr(err.message, "title-loc-args given without title-loc-key"), "%d %s", rc,
           err.message);
    push_payload_free(p);
    report("build with a NULL buffer gives the size; a buffer without room for the NUL is PUSH_E_BUFFER_TOO_SMALL", ok);
}

static void test_the_push_types_size_limit_is_enforced(void) {
    int ok = 1;
    push_error err;
    push_payload_t p = push_payload_new();
    static char body[5200];
    const size_t overhead = strlen("{\"aps\":{\"alert\":{\"body\":\"\"}}}");
    memset(body, 'x', sizeof body);
    ptrdiff_t len = 0;
    int32_t rc;
    /* 4096 bytes exactly: accepted for alert. */
    push_payload_set_string(p, PUSH_PAYLOAD_ALERT_BODY, body, (ptrdiff_t)(4096 - overhead), &err);
    EXPECT(push_payload_build(p, NULL, 0, &len, &err) == PUSH_OK && len == 4096, "%td %s", len, err.message);
    /* 4097: too large for alert, fine for voip (5120). */
    push_payload_set_string(p, PUSH_PAYLOAD_ALERT_BODY, body, (ptrdiff_t)(4097 - overhead), &err);
    rc = push_payload_build(p, NULL, 0, &len, &err);
    EXPECT(rc == PUSH_E_PAYLOAD_TOO_LARGE && len == 4097 && strstr(err.message, "payload is 4097 bytes; push type alert allows 4096"),
           "%d %td %s", rc, len, err.message);
    EXPECT(push_payload_set_int(p, PUSH_PAYLOAD_PUSH_TYPE, PUSH_TYPE_VOIP, &err) == PUSH_OK, "%s", err.message);
    EXPECT(push_payload_build(p, NULL, 0, &len, &err) == PUSH_OK && len == 4097, "%td %s", len, err.message);
    push_payload_set_string(p, PUSH_PAYLOAD_ALERT_BODY, body, (ptrdiff_t)(5121 - overhead), &err);
    rc = push_payload_build(p, NULL, 0, &len, &err);
    EXPECT(rc == PUSH_E_PAYLOAD_TOO_LARGE && strstr(err.message, "voip allows 5120"), "%d %s", rc, err.message);
    rc = push_payload_set_int(p, PUSH_PAYLOAD_PUSH_TYPE, 77, &err);
    EXPECT(rc == PUSH_E_BAD_PUSH_TYPE, "%d %s", rc, err.message);
    EXPECT(push_payload_clear(p, PUSH_PAYLOAD_PUSH_TYPE, &err) == PUSH_OK, "%s", err.message);
    push_payload_set_string(p, PUSH_PAYLOAD_ALERT_BODY, body, (ptrdiff_t)(4097 - overhead), &err);
    EXPECT(push_payload_build(p, NULL, 0, &len, &err) == PUSH_E_PAYLOAD_TOO_LARGE, "back to alert's limit");
    push_payload_free(p);
    report("the push type's size limit is enforced (4096; 5120 with PUSH_PAYLOAD_PUSH_TYPE voip)", ok);
}

static void test_topics_are_derived_from_bundle_ids(void) {
    int ok = 1;
    push_error err;
    char buf[300];
    ptrdiff_t len = 0;
    static const struct { int32_t type; const char *topic; } cases[] = {
        {PUSH_TYPE_ALERT, "com.example.app"},
        {PUSH_TYPE_BACKGROUND, "com.example.app"},
        {PUSH_TYPE_VOIP, "com.example.app.voip"},
        {PUSH_TYPE_COMPLICATION, "com.example.app.complication"},
        {PUSH_TYPE_FILEPROVIDER, "com.example.app.pushkit.fileprovider"},
        {PUSH_TYPE_LIVEACTIVITY, "com.example.app.push-type.liveactivity"},
        {PUSH_TYPE_LOCATION, "com.example.app.location-query"},
        {PUSH_TYPE_PUSHTOTALK, "com.example.app.voip-ptt"},
        {PUSH_TYPE_WIDGETS, "com.example.app.push-type.widgets"},
        {PUSH_TYPE_CONTROLS, "com.example.app.push-type.controls"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int32_t rc = push_topic_for("com.example.app", 0, cases[i].type, buf, sizeof buf, &len, &err);
        EXPECT(rc == PUSH_OK && strcmp(buf, cases[i].topic) == 0 && len == (ptrdiff_t)strlen(cases[i].topic),
               "type %d: rc %d %s", cases[i].type, rc, rc ? err.message : buf);
    }
    int32_t rc = push_topic_for("com.example.app", 0, PUSH_TYPE_MDM, buf, sizeof buf, &len, &err);
    EXPECT(rc == PUSH_E_BAD_TOPIC && strstr(err.message, "MDM certificate"), "%d %s", rc, err.message);
    rc = push_topic_for("com.example.app", 0, 42, buf, sizeof buf, &len, &err);
    EXPECT(rc == PUSH_E_BAD_PUSH_TYPE, "%d %s", rc, err.message);
    rc = push_topic_for("com.example app", 0, PUSH_TYPE_ALERT, buf, sizeof buf, &len, &err);
    EXPECT(rc == PUSH_E_BAD_TOPIC, "%d %s", rc, err.message);
    rc = push_topic_for("com.example.appXYZ", 15, PUSH_TYPE_VOIP, NULL, 0, &len, &err);
    EXPECT(rc == PUSH_OK && len == 20, "size query: %d %td", rc, len);
    rc = push_topic_for("com.example.app", 0, PUSH_TYPE_VOIP, buf, 20, &len, &err);
    EXPECT(rc == PUSH_E_BUFFER_TOO_SMALL && len == 20, "%d %td %s", rc, len, err.message);
    rc = push_topic_for(NULL, 0, PUSH_TYPE_ALERT, buf, sizeof buf, &len, &err);
    EXPECT(rc == PUSH_E_INVALID_ARGUMENT, "%d", rc);
    report("push_topic_for appends each push type's suffix; mdm and bad bundle ids are refused", ok);
}

static void test_a_live_activity_start_by_push_with_the_ios18_keys(void) {
    int ok = 1;
    push_error err;
    push_payload_t p = push_payload_new();
    EXPECT(push_payload_set_int(p, PUSH_PAYLOAD_PUSH_TYPE, PUSH_TYPE_LIVEACTIVITY, &err) == PUSH_OK, "%s", err.message);
    EXPECT(push_payload_set_string(p, PUSH_PAYLOAD_EVENT, "start", 0, &err) == PUSH_OK, "%s", err.message);
    EXPECT(push_payload_set_int(p, PUSH_PAYLOAD_TIMESTAMP, 1700000000, &err) == PUSH_OK, "%s", err.message);
    EXPECT(push_payload_set_int(p, PUSH_PAYLOAD_INPUT_PUSH_TOKEN, 1, &err) == PUSH_OK, "%s", err.message);
    EXPECT(push_payload_set_string(p, PUSH_PAYLOAD_INPUT_PUSH_CHANNEL, "dHN0LXNyY2gtY2hubA==", 0, &err) == PUSH_OK, "%s",
           err.message);
    int32_t rc;
    build(p, &rc, &err);
    EXPECT(rc == PUSH_E_BAD_PAYLOAD && strstr(err.message, "attributes-type"), "a start without attributes-type: %s", err.message);
    EXPECT(push_payload_set_string(p, PUSH_PAYLOAD_ATTRIBUTES_TYPE, "MatchAttributes", 0, &err) == PUSH_OK, "%s", err.message);
    build(p, &rc, &err);
    EXPECT(rc == PUSH_E_BAD_PAYLOAD && strstr(err.message, "needs attributes"), "without attributes: %s", err.message);
    EXPECT(push_payload_set_raw(p, PUSH_PAYLOAD_ATTRIBUTES, "{\"home\":\"A\"}", 0, &err) == PUSH_OK, "%s", err.message);
    build(p, &rc, &err);
    EXPECT(rc == PUSH_E_BAD_PAYLOAD && strstr(err.message, "alert"), "without an alert: %s", err.message);
    EXPECT(push_payload_set_string(p, PUSH_PAYLOAD_ALERT_TITLE, "Kick-off", 0, &err) == PUSH_OK, "%s", err.message);
    BUILDS_TO(p, "{\"aps\":{\"alert\":{\"title\":\"Kick-off\"},\"timestamp\":1700000000,\"event\":\"start\","
                 "\"attributes-type\":\"MatchAttributes\",\"attributes\":{\"home\":\"A\"},\"input-push-token\":1,"
                 "\"input-push-channel\":\"dHN0LXNyY2gtY2hubA==\"}}");
    EXPECT(push_payload_set_string(p, PUSH_PAYLOAD_INPUT_PUSH_CHANNEL, "not a channel", 0, &err) == PUSH_E_BAD_PAYLOAD,
           "a channel id that is not base64");
    EXPECT(push_payload_set_int(p, PUSH_PAYLOAD_INPUT_PUSH_TOKEN, 2, &err) == PUSH_E_BAD_PAYLOAD, "input-push-token 2");
    EXPECT(push_payload_set_string(p, PUSH_PAYLOAD_EVENT, "update", 0, &err) == PUSH_OK, "%s", err.message);
    build(p, &rc, &err);
    EXPECT(rc == PUSH_E_BAD_PAYLOAD && strstr(err.message, "start"), "input-push-* on an update: %s", err.message);
    EXPECT(push_payload_clear(p, PUSH_PAYLOAD_INPUT_PUSH_TOKEN, &err) == PUSH_OK, "%s", err.message);
    EXPECT(push_payload_clear(p, PUSH_PAYLOAD_INPUT_PUSH_CHANNEL, &err) == PUSH_OK, "%s", err.message);
    build(p, &rc, &err);
    EXPECT(rc == PUSH_OK, "an update without them builds: %s", err.message);
    push_payload_free(p);
    report("a Live Activity start by push is checked, with the iOS 18 input-push-token and input-push-channel", ok);
}

int main(void) {
    test_an_empty_payload_builds_to_an_empty_aps();
    test_every_string_field_lands_under_its_key();
    test_numbers_sounds_raw_and_custom_values();
    test_text_is_escaped_as_json_requires();
    test_bad_values_are_refused_and_leave_the_payload_unchanged();
    test_argument_errors();
    test_null_values_and_clear_remove_fields();
    test_build_reports_the_size_and_refuses_small_buffers();
    test_the_push_types_size_limit_is_enforced();
    test_topics_are_derived_from_bundle_ids();
    test_a_live_activity_start_by_push_with_the_ios18_keys();
    return finish("payload");
}
