/* The bad-input matrix of the C ABI: every exported function given NULL for each pointer,
 * negative and absurd sizes, invalid option and field numbers, invalid UTF-8, oversized values
 * (a 10 MB payload, token, topic, collapse id...), corrupt and wrong-type key files, a wrong
 * .p12 password, and handles of the wrong kind. Each call must return its documented status
 * with a non-empty message (when it takes a push_error) and must not crash.
 *
 * "Dangling sizes": a length larger than any valid value is refused before a byte is read. To
 * prove that nothing is read, such arguments point to a few bytes placed just before a
 * PROT_NONE page (guarded()): reading past them would crash the test. A length within the
 * limits but beyond the caller's buffer cannot be detected by any C library; swiftpush.h says so
 * ("What the library can check").
 *
 * Needs no server: clients connect to a loopback port that refuses connections. Started by
 * Tests/c/run.sh with SWIFTPUSH_TEST_PKI (scripts/make-test-pki.sh's directory). Prints one line
 * per test and "N passed, N failed" at the end. */
#define _DEFAULT_SOURCE
#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
#include <math.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "swiftpush.h"
#include "test_support.h"

static int ok; /* the test in progress: report(name, ok) */
static const char *pki;
static int refused_port;
static const char *token64 = "00fc13adff785122b4ad28809a3420982341241421348097878e577c991de8f0";
static push_error err;

/* Bytes of the test key that must never show up in a message. */
static char key_body_line[80];

static char *path(const char *file) {
    static char buf[4][512];
    static int i;
    i = (i + 1) % 4;
    snprintf(buf[i], sizeof buf[i], "%s/%s", pki, file);
    return buf[i];
}

/* The message in err is set, NUL-terminated inside the array, agrees with the status, and holds
 * no key material. */
static void check_message(int line, const char *call, int32_t rc) {
    if (err.code != rc) {
        printf("    line %d: %s: err.code %d != returned %d\n", line, call, err.code, rc);
        ok = 0;
    }
    if (!memchr(err.message, 0, sizeof err.message)) {
        printf("    line %d: %s: message not NUL-terminated\n", line, call);
        ok = 0;
        return;
    }
    if (rc != PUSH_OK && err.message[0] == 0) {
        printf("    line %d: %s: empty message for %d\n", line, call, rc);
        ok = 0;
    }
    if (strstr(err.message, "BEGIN") || strstr(err.message, "PRIVATE KEY") ||
        (key_body_line[0] && strstr(err.message, key_body_line))) {
        printf("    line %d: %s: message shows key material: %s\n", line, call, err.message);
        ok = 0;
    }
}

/* CHECK(status, call): call (which writes &err) returns status, with a proper message. */
#define CHECK(want, call)                                                                          \
    do {                                                                                           \
        memset(&err, 0x55, sizeof err);                                                            \
        int32_t rc_ = (call);                                                                      \
        if (rc_ != (want)) {                                                                       \
            printf("    line %d: %s returned %d, expected %d (%.200s)\n", __LINE__, #call, rc_,    \
                   (int)(want), memchr(err.message, 0, sizeof err.message) ? err.message : "?");    \
            ok = 0;                                                                                \
        } else {                                                                                   \
            check_message(__LINE__, #call, rc_);                                                   \
        }                                                                                          \
    } while (0)

/* CHECK_MSG(status, call, text): as CHECK, and the message contains text. */
#define CHECK_MSG(want, call, text)                                                                \
    do {                                                                                           \
        CHECK(want, call);                                                                         \
        if (!strstr(err.message, (text))) {                                                        \
            printf("    line %d: %s: message \"%s\" lacks \"%s\"\n", __LINE__, #call, err.message, \
                   (text));                                                                        \
            ok = 0;                                                                                \
        }                                                                                          \
    } while (0)

/* For functions without a push_error: the status alone, and push_strerror says something. */
#define CHECK_RC(want, call)                                                                       \
    do {                                                                                           \
        int32_t rc_ = (call);                                                                      \
        if (rc_ != (want) || !push_strerror(rc_)[0]) {                                             \
            printf("    line %d: %s returned %d, expected %d\n", __LINE__, #call, rc_, (int)(want));\
            ok = 0;                                                                                \
        }                                                                                          \
    } while (0)

/* `n` bytes of `s` copied to the very end of a readable page followed by an inaccessible one:
 * reading one byte more than `n` crashes. Leaked on purpose (a few pages per test run). */
static const char *guarded(const char *s, size_t n) {
    long page = sysconf(_SC_PAGESIZE);
    size_t span = ((n + (size_t)page - 1) / (size_t)page + 1) * (size_t)page;
    char *base = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED) { perror("mmap"); exit(2); }
    if (mprotect(base + span - (size_t)page, (size_t)page, PROT_NONE) != 0) { perror("mprotect"); exit(2); }
    char *p = base + span - (size_t)page - n;
    memcpy(p, s, n);
    return p;
}

static double now_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* A configuration for a client that connects (in the background) to a refusing loopback port. */
static push_config_t good_config(void) {
    push_config_t cfg = push_config_new();
    push_config_set_string(cfg, PUSH_OPT_HOST, "127.0.0.1", 0, NULL);
    push_config_set_int(cfg, PUSH_OPT_PORT, refused_port, NULL);
    push_config_set_string(cfg, PUSH_OPT_CA_FILE, path("ca.pem"), 0, NULL);
    push_config_set_string(cfg, PUSH_OPT_TOKEN_KEY_FILE, path("AuthKey_TESTKEY001.p8"), 0, NULL);
    push_config_set_string(cfg, PUSH_OPT_KEY_ID, "TESTKEY001", 0, NULL);
    push_config_set_string(cfg, PUSH_OPT_TEAM_ID, "TEAM123456", 0, NULL);
    push_config_set_string(cfg, PUSH_OPT_DEFAULT_TOPIC, "com.example.app", 0, NULL);
    return cfg;
}

static push_client_t good_client(void) {
    push_config_t cfg = good_config();
    push_client_t client = NULL;
    if (push_client_open(cfg, &client, &err) != PUSH_OK) printf("    open failed: %s\n", err.message);
    push_config_free(cfg);
    return client;
}

static push_notification notification(void) {
    push_notification n;
    memset(&n, 0, sizeof n);
    n.struct_size = sizeof n;
    n.device_token = token64;
    n.payload = "{\"aps\":{\"alert\":\"hi\"}}";
    return n;
}

static char *write_temp(const char *name, const char *content, size_t length) {
    static char buf[4][512];
    static int i;
    i = (i + 1) % 4;
    snprintf(buf[i], sizeof buf[i], "%s/bad-input-%d-%s", P_tmpdir, (int)getpid(), name);
    FILE *f = fopen(buf[i], "wb");
    if (!f) { perror(buf[i]); exit(2); }
    fwrite(content, 1, length, f);
    fclose(f);
    return buf[i];
}

static char *read_file(const char *file, size_t *length) {
    FILE *f = fopen(file, "rb");
    if (!f) { perror(file); exit(2); }
    static char buf[65536];
    *length = fread(buf, 1, sizeof buf - 1, f);
    buf[*length] = 0;
    fclose(f);
    return buf;
}

/* ---------------------------------------------------------------------------------------- */

static void test_static_functions_answer_every_value(void) {
    ok = 1;
    EXPECT(push_version() && strcmp(push_version(), PUSH_VERSION_STRING) == 0, "version");
    int32_t codes[] = {INT32_MIN, -100, -99, -20, -19, -1, 0, 1, 99, INT32_MAX};
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
        const char *s = push_strerror(codes[i]);
        EXPECT(s && s[0], "push_strerror(%d)", codes[i]);
    }
    for (int32_t c = -100; c <= 0; c++) EXPECT(push_strerror(c)[0], "push_strerror(%d)", c);
    int32_t reasons[] = {INT32_MIN, -1, 0, 1, 40, 41, 999, 1000, 1001, INT32_MAX};
    for (size_t i = 0; i < sizeof reasons / sizeof reasons[0]; i++) {
        const char *s = push_reason_name(reasons[i]);
        EXPECT(s != NULL, "push_reason_name(%d)", reasons[i]);
        if (s && reasons[i] != 0) EXPECT(s[0], "push_reason_name(%d) is empty", reasons[i]);
    }
    EXPECT(strcmp(push_reason_name(-1), "Unknown") == 0, "an unknown reason: %s", push_reason_name(-1));
    report(__func__, ok);
}

static void test_config_functions_refuse_NULL_arguments(void) {
    ok = 1;
    push_config_t cfg = push_config_new();
    EXPECT(cfg != NULL, "push_config_new");
    CHECK_MSG(PUSH_E_INVALID_ARGUMENT, push_config_set_string(NULL, PUSH_OPT_HOST, "x", 0, &err), "config");
    CHECK_MSG(PUSH_E_INVALID_ARGUMENT, push_config_set_string(cfg, PUSH_OPT_HOST, NULL, 0, &err), "NULL");
    CHECK_MSG(PUSH_E_INVALID_ARGUMENT, push_config_set_string(cfg, PUSH_OPT_HOST, NULL, 5, &err), "NULL");
    CHECK_MSG(PUSH_E_INVALID_ARGUMENT, push_config_set_string(cfg, PUSH_OPT_TOKEN_KEY_PEM, NULL, 0, &err), "NULL");
    CHECK(PUSH_E_INVALID_ARGUMENT, push_config_set_int(NULL, PUSH_OPT_PORT, 443, &err));
    CHECK(PUSH_E_INVALID_ARGUMENT, push_config_set_result_callback(NULL, NULL, NULL, &err));
    CHECK(PUSH_OK, push_config_set_result_callback(cfg, NULL, NULL, &err)); /* NULL callback: back to polling */
    /* err itself may be NULL everywhere */
    EXPECT(push_config_set_string(NULL, PUSH_OPT_HOST, "x", 0, NULL) == PUSH_E_INVALID_ARGUMENT, "NULL err");
    EXPECT(push_config_set_string(cfg, PUSH_OPT_HOST, NULL, 0, NULL) == PUSH_E_INVALID_ARGUMENT, "NULL err");
    EXPECT(push_config_set_int(cfg, 999, 1, NULL) == PUSH_E_BAD_OPTION, "NULL err");
    EXPECT(push_config_set_result_callback(NULL, NULL, NULL, NULL) == PUSH_E_INVALID_ARGUMENT, "NULL err");
    /* open */
    static int not_a_client;
    push_client_t client = (push_client_t)(void *)&not_a_client; /* must be overwritten with NULL */
    CHECK_MSG(PUSH_E_INVALID_ARGUMENT, push_client_open(NULL, &client, &err), "config");
    EXPECT(client == NULL, "client_out is set to NULL on failure");
    CHECK_MSG(PUSH_E_INVALID_ARGUMENT, push_client_open(cfg, NULL, &err), "client_out");
    EXPECT(push_client_open(NULL, NULL, NULL) == PUSH_E_INVALID_ARGUMENT, "all NULL");
    push_config_free(NULL);
    push_config_free(cfg);
    report(__func__, ok);
}

static void test_config_strings_refuse_bad_lengths_without_reading_them(void) {
    ok = 1;
    push_config_t cfg = push_config_new();
    const char *abc = guarded("abc", 3);
    CHECK_MSG(PUSH_E_INVALID_ARGUMENT, push_config_set_string(cfg, PUSH_OPT_HOST, abc, -1, &err), "negative");
    CHECK_MSG(PUSH_E_INVALID_ARGUMENT, push_config_set_string(cfg, PUSH_OPT_HOST, abc, PTRDIFF_MIN, &err), "negative");
    CHECK_MSG(PUSH_E_INVALID_ARGUMENT, push_config_set_string(cfg, PUSH_OPT_TOKEN_KEY_PEM, abc, -1, &err), "negative");
    /* lengths larger than any valid value: refused before a byte is read (abc is guarded) */
    int options[] = {PUSH_OPT_HOST, PUSH_OPT_CA_FILE, PUSH_OPT_TOKEN_KEY_FILE, PUSH_OPT_KEY_ID, PUSH_OPT_TEAM_ID,
                     PUSH_OPT_DEFAULT_TOPIC, PUSH_OPT_PROXY, PUSH_OPT_PROXY_CREDENTIALS, PUSH_OPT_CERT_FILE,
                     PUSH_OPT_CERT_KEY_FILE, PUSH_OPT_P12_FILE, PUSH_OPT_P12_PASSWORD};
    for (size_t i = 0; i < sizeof options / sizeof options[0]; i++) {
        CHECK_MSG(PUSH_E_BAD_OPTION, push_config_set_string(cfg, options[i], abc, 10 * 1024 * 1024, &err), "longer than");
        CHECK_MSG(PUSH_E_BAD_OPTION, push_config_set_string(cfg, options[i], abc, PTRDIFF_MAX, &err), "longer than");
    }
    CHECK_MSG(PUSH_E_KEY, push_config_set_string(cfg, PUSH_OPT_TOKEN_KEY_PEM, abc, 10 * 1024 * 1024, &err), "longer than");
    CHECK_MSG(PUSH_E_KEY, push_config_set_string(cfg, PUSH_OPT_TOKEN_KEY_PEM, abc, PTRDIFF_MAX, &err), "longer than");
    /* a 10 MB NUL-terminated string is refused after a bounded scan */
    size_t big = 10 * 1024 * 1024;
    char *huge = malloc(big + 1);
    memset(huge, 'a', big);
    huge[big] = 0;
    double start = now_seconds();
    CHECK_MSG(PUSH_E_BAD_OPTION, push_config_set_string(cfg, PUSH_OPT_HOST, huge, 0, &err), "longer than");
    CHECK_MSG(PUSH_E_KEY, push_config_set_string(cfg, PUSH_OPT_TOKEN_KEY_PEM, huge, 0, &err), "longer than");
    double took = now_seconds() - start;
    EXPECT(took < 0.5, "refused at once (%.3f s)", took);
    free(huge);
    /* the configuration is untouched and still usable */
    CHECK(PUSH_OK, push_config_set_string(cfg, PUSH_OPT_HOST, "localhost", 0, &err));
    push_config_free(cfg);
    report(__func__, ok);
}

static void test_config_strings_must_be_UTF8_without_NUL(void) {
    ok = 1;
    push_config_t cfg = push_config_new();
    CHECK_MSG(PUSH_E_BAD_OPTION, push_config_set_string(cfg, PUSH_OPT_CA_FILE, "/tmp/\xc3\x28.pem", 0, &err), "UTF-8");
    CHECK_MSG(PUSH_E_BAD_OPTION, push_config_set_string(cfg, PUSH_OPT_TOKEN_KEY_FILE, "\xff\xfe", 0, &err), "UTF-8");
    CHECK_MSG(PUSH_E_BAD_OPTION, push_config_set_string(cfg, PUSH_OPT_P12_PASSWORD, "pass\xe2\x82", 0, &err), "UTF-8");
    CHECK_MSG(PUSH_E_BAD_OPTION, push_config_set_string(cfg, PUSH_OPT_PROXY_CREDENTIALS, "u:\xed\xa0\x80", 0, &err), "UTF-8");
    CHECK_MSG(PUSH_E_BAD_OPTION, push_config_set_string(cfg, PUSH_OPT_PROXY, "\xc0\xaf:8080", 0, &err), "UTF-8");
    CHECK(PUSH_E_BAD_OPTION, push_config_set_string(cfg, PUSH_OPT_HOST, "h\xc3\xa9st", 0, &err)); /* valid UTF-8, not a host */
    CHECK(PUSH_E_BAD_OPTION, push_config_set_string(cfg, PUSH_OPT_HOST, "\xff", 0, &err));
    CHECK_MSG(PUSH_E_BAD_OPTION, push_config_set_string(cfg, PUSH_OPT_KEY_ID, "KEY\xff", 0, &err), "UTF-8");
    CHECK_MSG(PUSH_E_BAD_OPTION, push_config_set_string(cfg, PUSH_OPT_KEY_ID, "K\xc3\xa9Y", 0, &err), "printable ASCII");
    CHECK_MSG(PUSH_E_BAD_OPTION, push_config_set_string(cfg, PUSH_OPT_TEAM_ID, "TEAM \"1\"", 0, &err), "printable ASCII");
    CHECK_MSG(PUSH_E_BAD_OPTION, push_config_set_string(cfg, PUSH_OPT_DEFAULT_TOPIC, "com.ex\xc3\xa4mple", 0, &err), "ASCII");
    CHECK_MSG(PUSH_E_BAD_OPTION, push_config_set_string(cfg, PUSH_OPT_DEFAULT_TOPIC, "com example", 0, &err), "ASCII");
    /* an explicit length that spans a NUL */
    CHECK_MSG(PUSH_E_BAD_OPTION, push_config_set_string(cfg, PUSH_OPT_CA_FILE, "/tmp\0/x", 7, &err), "NUL");
    CHECK_MSG(PUSH_E_BAD_OPTION, push_config_set_string(cfg, PUSH_OPT_KEY_ID, "AB\0CD", 5, &err), "NUL");
    CHECK(PUSH_OK, push_config_set_string(cfg, PUSH_OPT_DEFAULT_TOPIC, "", 0, &err)); /* "" means none */
    push_config_free(cfg);
    report(__func__, ok);
}

static void test_config_options_out_of_range_are_refused(void) {
    ok = 1;
    push_config_t cfg = push_config_new();
    int32_t bad[] = {0, -1, PUSH_OPT_UNREACHABLE_AFTER_MS + 1, 999, INT32_MIN, INT32_MAX};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK_MSG(PUSH_E_BAD_OPTION, push_config_set_string(cfg, bad[i], "x", 0, &err), "not a string option");
        CHECK_MSG(PUSH_E_BAD_OPTION, push_config_set_int(cfg, bad[i], 1, &err), "not an integer option");
    }
    CHECK_MSG(PUSH_E_BAD_OPTION, push_config_set_string(cfg, PUSH_OPT_PORT, "443", 0, &err), "not a string option");
    CHECK_MSG(PUSH_E_BAD_OPTION, push_config_set_int(cfg, PUSH_OPT_HOST, 1, &err), "not an integer option");
    int ints[] = {PUSH_OPT_PORT, PUSH_OPT_CONNECTIONS, PUSH_OPT_MAX_STREAMS, PUSH_OPT_QUEUE_CAPACITY,
                  PUSH_OPT_DEADLINE_MS, PUSH_OPT_CONNECT_TIMEOUT_MS, PUSH_OPT_MAX_ATTEMPTS, PUSH_OPT_RETRY_DELAY_MS,
                  PUSH_OPT_IDLE_PING_MS, PUSH_OPT_PING_TIMEOUT_MS, PUSH_OPT_RETIRE_AFTER_TIMEOUTS, PUSH_OPT_ENVIRONMENT,
                  PUSH_OPT_IO_THREADS, PUSH_OPT_RECONNECT_MAX_MS, PUSH_OPT_MIN_CONNECTIONS, PUSH_OPT_POOL_SHRINK_MS,
                  PUSH_OPT_UNREACHABLE_AFTER_MS};
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
        CHECK(PUSH_E_BAD_OPTION, push_config_set_int(cfg, ints[i], INT64_MIN, &err));
        CHECK(PUSH_E_BAD_OPTION, push_config_set_int(cfg, ints[i], INT64_MAX, &err));
        CHECK(PUSH_E_BAD_OPTION, push_config_set_int(cfg, ints[i], -1, &err));
    }
    CHECK(PUSH_E_BAD_OPTION, push_config_set_int(cfg, PUSH_OPT_IO_THREADS, 0, &err));
    CHECK(PUSH_E_BAD_OPTION, push_config_set_int(cfg, PUSH_OPT_IO_THREADS, 17, &err));
    CHECK(PUSH_OK, push_config_set_int(cfg, PUSH_OPT_IO_THREADS, 16, &err));
    CHECK_MSG(PUSH_E_BAD_OPTION, push_config_set_int(cfg, PUSH_OPT_RECONNECT_MAX_MS, 999, &err), "1000...3600000");
    CHECK(PUSH_E_BAD_OPTION, push_config_set_int(cfg, PUSH_OPT_RECONNECT_MAX_MS, 3600001, &err));
    CHECK(PUSH_OK, push_config_set_int(cfg, PUSH_OPT_RECONNECT_MAX_MS, 1000, &err));
    CHECK_MSG(PUSH_E_BAD_OPTION, push_config_set_int(cfg, PUSH_OPT_MIN_CONNECTIONS, 65, &err), "0...64");
    CHECK(PUSH_OK, push_config_set_int(cfg, PUSH_OPT_MIN_CONNECTIONS, 0, &err));
    CHECK_MSG(PUSH_E_BAD_OPTION, push_config_set_int(cfg, PUSH_OPT_POOL_SHRINK_MS, 99, &err), "100...3600000");
    CHECK(PUSH_OK, push_config_set_int(cfg, PUSH_OPT_POOL_SHRINK_MS, 100, &err));
    CHECK_MSG(PUSH_E_BAD_OPTION, push_config_set_int(cfg, PUSH_OPT_UNREACHABLE_AFTER_MS, 3600001, &err), "0...3600000");
    CHECK(PUSH_OK, push_config_set_int(cfg, PUSH_OPT_UNREACHABLE_AFTER_MS, 0, &err)); /* 0: off */
    CHECK_MSG(PUSH_E_BAD_OPTION, push_config_set_string(cfg, PUSH_OPT_PROXY, "no-port", 0, &err), "host:port");
    CHECK_MSG(PUSH_E_BAD_OPTION, push_config_set_string(cfg, PUSH_OPT_PROXY, "h:99999", 0, &err), "host:port");
    CHECK(PUSH_E_BAD_OPTION, push_config_set_string(cfg, PUSH_OPT_PROXY_CREDENTIALS, "no-colon", 0, &err));
    CHECK(PUSH_E_BAD_OPTION, push_config_set_string(cfg, PUSH_OPT_KEY_ID, "", 0, &err));
    CHECK(PUSH_E_BAD_OPTION, push_config_set_string(cfg, PUSH_OPT_HOST, "", 0, &err));
    push_config_free(cfg);
    report(__func__, ok);
}

static void test_corrupt_and_wrong_type_keys_and_certificates_fail_without_quoting_them(void) {
    ok = 1;
    push_config_t cfg = push_config_new();
    size_t len = 0;
    char pem[4096];
    const char *text = read_file(path("AuthKey_TESTKEY001.p8"), &len);
    memcpy(pem, text, len + 1);
    /* a corrupt copy: one base64 character of the body changed, and a truncated copy */
    char corrupt[4096];
    memcpy(corrupt, pem, len + 1);
    char *body = strchr(corrupt, '\n') + 1;
    body[10] = body[10] == 'A' ? 'B' : 'A';
    body[11] = '*';
    CHECK_MSG(PUSH_E_KEY, push_config_set_string(cfg, PUSH_OPT_TOKEN_KEY_PEM, corrupt, 0, &err), "not a PEM private key");
    CHECK(PUSH_E_KEY, push_config_set_string(cfg, PUSH_OPT_TOKEN_KEY_PEM, pem, (ptrdiff_t)len / 2, &err));
    CHECK(PUSH_E_KEY, push_config_set_string(cfg, PUSH_OPT_TOKEN_KEY_PEM, "\xff\xfe\x00", 2, &err));
    CHECK_MSG(PUSH_E_KEY, push_config_set_string(cfg, PUSH_OPT_TOKEN_KEY_FILE, write_temp("corrupt.p8", corrupt, len), 0, &err),
              "not a PEM private key");
    CHECK_MSG(PUSH_E_KEY, push_config_set_string(cfg, PUSH_OPT_TOKEN_KEY_FILE, write_temp("empty.p8", "", 0), 0, &err),
              "not a PEM private key");
    CHECK_MSG(PUSH_E_KEY, push_config_set_string(cfg, PUSH_OPT_TOKEN_KEY_FILE, path("rsa.key"), 0, &err), "P-256");
    CHECK(PUSH_E_KEY, push_config_set_string(cfg, PUSH_OPT_TOKEN_KEY_FILE, path("ca.pem"), 0, &err));
    CHECK(PUSH_E_KEY, push_config_set_string(cfg, PUSH_OPT_TOKEN_KEY_FILE, path("AuthKey_TESTKEY001.pub.pem"), 0, &err));
    CHECK(PUSH_E_KEY, push_config_set_string(cfg, PUSH_OPT_TOKEN_KEY_FILE, P_tmpdir, 0, &err)); /* a directory */
    char *big = calloc(100000, 1);
    memset(big, 'A', 99999);
    CHECK_MSG(PUSH_E_KEY, push_config_set_string(cfg, PUSH_OPT_TOKEN_KEY_FILE, write_temp("big.p8", big, 99999), 0, &err),
              "larger than");
    free(big);
    CHECK_MSG(PUSH_E_KEY, push_config_set_string(cfg, PUSH_OPT_TOKEN_KEY_FILE, "/nonexistent/AuthKey.p8", 0, &err),
              "No such file");
    /* .p12: not a .p12, unreadable (reported at once; a wrong password at open, see below) */
    CHECK_MSG(PUSH_E_KEY, push_config_set_string(cfg, PUSH_OPT_P12_FILE, path("ca.pem"), 0, &err), "PKCS#12");
    CHECK(PUSH_E_KEY, push_config_set_string(cfg, PUSH_OPT_P12_FILE, "/nonexistent/cert.p12", 0, &err));
    CHECK(PUSH_E_KEY, push_config_set_string(cfg, PUSH_OPT_CERT_FILE, "/nonexistent/cert.pem", 0, &err));
    push_config_free(cfg);

    /* The .p12 is opened with its password when the client opens: the two options may come in
     * either order, and a wrong password fails the open, whichever came first. */
    const char *passwords[] = {"wrong", "secret"};
    for (int password_first = 0; password_first < 2; password_first++) {
        for (size_t i = 0; i < 2; i++) {
            cfg = push_config_new();
            push_config_set_string(cfg, PUSH_OPT_HOST, "127.0.0.1", 0, NULL);
            push_config_set_int(cfg, PUSH_OPT_PORT, 1, NULL);
            if (password_first) CHECK(PUSH_OK, push_config_set_string(cfg, PUSH_OPT_P12_PASSWORD, passwords[i], 0, &err));
            CHECK(PUSH_OK, push_config_set_string(cfg, PUSH_OPT_P12_FILE, path("client.p12"), 0, &err));
            if (!password_first) CHECK(PUSH_OK, push_config_set_string(cfg, PUSH_OPT_P12_PASSWORD, passwords[i], 0, &err));
            push_client_t opened = NULL;
            if (i == 0) {
                CHECK_MSG(PUSH_E_KEY, push_client_open(cfg, &opened, &err), "wrong password");
                EXPECT(opened == NULL, "no client with a wrong .p12 password");
            } else {
                CHECK(PUSH_OK, push_client_open(cfg, &opened, &err));
                EXPECT(opened != NULL, "a client with the right .p12 password (password set %s the file)",
                       password_first ? "before" : "after");
                push_client_close(opened, 0);
                push_client_free(opened);
            }
            push_config_free(cfg);
        }
    }

    /* PEM certificate and key that do not belong together, or are not what they claim: at open */
    const char *pairs[][2] = {{"client.pem", "untrusted-client.key"}, {"client.pem", "AuthKey_TESTKEY001.pub.pem"},
                              {"client.key", "client.key"}, {"rsa.key", "rsa.key"}};
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        cfg = push_config_new();
        push_config_set_string(cfg, PUSH_OPT_HOST, "127.0.0.1", 0, NULL);
        push_config_set_string(cfg, PUSH_OPT_CERT_FILE, path(pairs[i][0]), 0, NULL);
        push_config_set_string(cfg, PUSH_OPT_CERT_KEY_FILE, path(pairs[i][1]), 0, NULL);
        push_client_t client = NULL;
        CHECK(PUSH_E_KEY, push_client_open(cfg, &client, &err));
        EXPECT(client == NULL, "no client");
        push_config_free(cfg);
    }
    /* a key id that the server would reject is not the library's to judge; a token key and a
     * certificate at once is */
    cfg = good_config();
    push_config_set_string(cfg, PUSH_OPT_CERT_FILE, path("client.pem"), 0, NULL);
    push_config_set_string(cfg, PUSH_OPT_CERT_KEY_FILE, path("client.key"), 0, NULL);
    push_client_t client = NULL;
    CHECK_MSG(PUSH_E_KEY, push_client_open(cfg, &client, &err), "choose one");
    push_config_free(cfg);
    report(__func__, ok);
}

static void test_client_functions_refuse_NULL_and_absurd_sizes(void) {
    ok = 1;
    push_client_t client = good_client();
    EXPECT(client != NULL, "client");
    if (!client) { report(__func__, ok); return; }
    push_notification n = notification();
    push_result r[4];
    push_stats stats;
    ptrdiff_t count = 77;
    CHECK(PUSH_E_INVALID_ARGUMENT, push_client_wait_connected(NULL, 0, &err));
    CHECK(PUSH_E_INVALID_ARGUMENT, push_client_send(NULL, &n, 0, &err));
    CHECK_MSG(PUSH_E_INVALID_ARGUMENT, push_client_send(client, NULL, 0, &err), "notification is NULL");
    CHECK(PUSH_E_INVALID_ARGUMENT, push_client_send_batch(NULL, &n, 1, 0, &count, &err));
    EXPECT(count == 0, "accepted is 0 after a refusal (%td)", count);
    CHECK_MSG(PUSH_E_INVALID_ARGUMENT, push_client_send_batch(client, NULL, 1, 0, &count, &err), "NULL");
    CHECK_MSG(PUSH_E_INVALID_ARGUMENT, push_client_send_batch(client, &n, -1, 0, &count, &err), "negative");
    CHECK_MSG(PUSH_E_INVALID_ARGUMENT, push_client_send_batch(client, &n, PTRDIFF_MIN, 0, &count, &err), "negative");
    CHECK_MSG(PUSH_E_INVALID_ARGUMENT, push_client_send_batch(client, &n, PTRDIFF_MAX, 0, &count, &err), "larger than any");
    CHECK(PUSH_OK, push_client_send_batch(client, NULL, 0, 0, NULL, &err)); /* nothing to send */
    /* poll has no push_error: the status says it all */
    CHECK_RC(PUSH_E_INVALID_ARGUMENT, push_client_poll(NULL, r, 4, sizeof r[0], 0, &count));
    CHECK_RC(PUSH_E_INVALID_ARGUMENT, push_client_poll(client, NULL, 4, sizeof r[0], 0, &count));
    CHECK_RC(PUSH_E_INVALID_ARGUMENT, push_client_poll(client, r, 4, sizeof r[0], 0, NULL));
    CHECK_RC(PUSH_E_INVALID_ARGUMENT, push_client_poll(client, r, -1, sizeof r[0], 0, &count));
    CHECK_RC(PUSH_E_INVALID_ARGUMENT, push_client_poll(client, r, 4, 0, 0, &count));
    CHECK_RC(PUSH_E_INVALID_ARGUMENT, push_client_poll(client, r, 4, -1, 0, &count));
    CHECK_RC(PUSH_E_INVALID_ARGUMENT, push_client_poll(client, r, 4, 8, 0, &count));
    CHECK_RC(PUSH_E_INVALID_ARGUMENT, push_client_poll(client, r, 4, PTRDIFF_MAX, 0, &count));
    CHECK_RC(PUSH_E_INVALID_ARGUMENT, push_client_poll(client, r, 4, 1 << 20, 0, &count));
    CHECK_RC(PUSH_E_INVALID_ARGUMENT, push_client_poll(client, r, PTRDIFF_MAX / 100, sizeof r[0], 0, &count));
    CHECK_RC(PUSH_OK, push_client_poll(client, NULL, 0, 0, 0, &count)); /* max 0: nothing asked */
    EXPECT(count == 0, "count 0");
    int fd = 5;
    CHECK(PUSH_E_INVALID_ARGUMENT, push_client_result_fd(NULL, &fd, &err));
    EXPECT(fd == -1, "fd is -1 after a refusal (%d)", fd);
    CHECK_MSG(PUSH_E_INVALID_ARGUMENT, push_client_result_fd(client, NULL, &err), "fd is NULL");
    CHECK_RC(PUSH_E_INVALID_ARGUMENT, push_client_stats(NULL, &stats, sizeof stats));
    CHECK_RC(PUSH_E_INVALID_ARGUMENT, push_client_stats(client, NULL, sizeof stats));
    CHECK_RC(PUSH_E_INVALID_ARGUMENT, push_client_stats(client, &stats, 8));
    CHECK_RC(PUSH_E_INVALID_ARGUMENT, push_client_stats(client, &stats, -1));
    CHECK_RC(PUSH_OK, push_client_stats(client, &stats, sizeof stats));
    EXPECT(stats.sent == 0 && stats.queued == 0, "nothing was queued by refused calls");
    CHECK_RC(PUSH_OK, push_client_close(NULL, 0));
    push_client_free(NULL);
    /* the client still works after all that */
    CHECK(PUSH_OK, push_client_send(client, &n, 0, &err));
    CHECK_RC(PUSH_OK, push_client_close(client, 0));
    CHECK_RC(PUSH_OK, push_client_poll(client, r, 4, sizeof r[0], 1000, &count));
    EXPECT(count == 1 && r[0].outcome == PUSH_OUTCOME_FAILED, "the one notification sent was cancelled (%td)", count);
    push_client_free(client);
    report(__func__, ok);
}

static void test_handles_of_the_wrong_kind_are_refused(void) {
    ok = 1;
    push_config_t cfg = good_config();
    push_client_t client = good_client();
    push_payload_t payload = push_payload_new();
    EXPECT(cfg && client && payload, "handles");
    if (!cfg || !client || !payload) { report(__func__, ok); return; }
    push_client_t cfg_as_client = (push_client_t)(void *)cfg;
    push_client_t payload_as_client = (push_client_t)(void *)payload;
    push_config_t client_as_config = (push_config_t)(void *)client;
    push_config_t payload_as_config = (push_config_t)(void *)payload;
    push_payload_t config_as_payload = (push_payload_t)(void *)cfg;
    push_payload_t client_as_payload = (push_payload_t)(void *)client;
    /* not a handle at all: 64 readable bytes of zeros, and of 0xff */
    static uint64_t zeros[8], ones[8];
    memset(ones, 0xff, sizeof ones);
    push_client_t fakes[] = {cfg_as_client, payload_as_client, (push_client_t)(void *)zeros, (push_client_t)(void *)ones};
    push_notification n = notification();
    push_result r;
    push_stats stats;
    ptrdiff_t count;
    for (size_t i = 0; i < sizeof fakes / sizeof fakes[0]; i++) {
        CHECK_MSG(PUSH_E_INVALID_ARGUMENT, push_client_send(fakes[i], &n, 0, &err), "not a push_client_t");
        CHECK(PUSH_E_INVALID_ARGUMENT, push_client_send_batch(fakes[i], &n, 1, 0, &count, &err));
        CHECK(PUSH_E_INVALID_ARGUMENT, push_client_wait_connected(fakes[i], 0, &err));
        CHECK_RC(PUSH_E_INVALID_ARGUMENT, push_client_poll(fakes[i], &r, 1, sizeof r, 0, &count));
        CHECK_RC(PUSH_E_INVALID_ARGUMENT, push_client_stats(fakes[i], &stats, sizeof stats));
        CHECK_RC(PUSH_E_INVALID_ARGUMENT, push_client_close(fakes[i], 0));
        push_client_free(fakes[i]); /* ignored */
    }
    push_config_t fake_configs[] = {client_as_config, payload_as_config, (push_config_t)(void *)zeros,
                                    (push_config_t)(void *)ones};
    for (size_t i = 0; i < sizeof fake_configs / sizeof fake_configs[0]; i++) {
        CHECK_MSG(PUSH_E_INVALID_ARGUMENT, push_config_set_string(fake_configs[i], PUSH_OPT_HOST, "x", 0, &err),
                  "not a push_config_t");
        CHECK(PUSH_E_INVALID_ARGUMENT, push_config_set_int(fake_configs[i], PUSH_OPT_PORT, 1, &err));
        CHECK(PUSH_E_INVALID_ARGUMENT, push_config_set_result_callback(fake_configs[i], NULL, NULL, &err));
        push_client_t out = NULL;
        CHECK(PUSH_E_INVALID_ARGUMENT, push_client_open(fake_configs[i], &out, &err));
        EXPECT(out == NULL, "no client");
        push_config_free(fake_configs[i]); /* ignored */
    }
    push_payload_t fake_payloads[] = {config_as_payload, client_as_payload, (push_payload_t)(void *)zeros,
                                      (push_payload_t)(void *)ones};
    char buf[64];
    ptrdiff_t len;
    for (size_t i = 0; i < sizeof fake_payloads / sizeof fake_payloads[0]; i++) {
        CHECK_MSG(PUSH_E_INVALID_ARGUMENT, push_payload_set_string(fake_payloads[i], PUSH_PAYLOAD_ALERT_BODY, "x", 0, &err),
                  "not a push_payload_t");
        CHECK(PUSH_E_INVALID_ARGUMENT, push_payload_build(fake_payloads[i], buf, sizeof buf, &len, &err));
        CHECK(PUSH_E_INVALID_ARGUMENT, push_payload_clear(fake_payloads[i], PUSH_PAYLOAD_ALERT_BODY, &err));
        push_payload_free(fake_payloads[i]); /* ignored */
    }
    /* the real handles were not harmed */
    CHECK(PUSH_OK, push_config_set_string(cfg, PUSH_OPT_HOST, "127.0.0.1", 0, &err));
    CHECK(PUSH_OK, push_client_send(client, &n, 0, &err));
    CHECK(PUSH_OK, push_payload_set_string(payload, PUSH_PAYLOAD_ALERT_BODY, "x", 0, &err));
    CHECK(PUSH_OK, push_payload_build(payload, buf, sizeof buf, &len, &err));
    push_payload_free(payload);
    push_config_free(cfg);
    push_client_close(client, 0);
    push_client_free(client);
    report(__func__, ok);
}

static void test_invalid_notifications_are_refused_with_the_field_named(void) {
    ok = 1;
    push_client_t client = good_client();
    if (!client) { ok = 0; report(__func__, ok); return; }
    push_notification n;
    const char *small = guarded("abcd", 4);   /* reading past 4 bytes crashes */
    const char *tok = guarded(token64, 64);
#define SEND(want, text) CHECK_MSG(want, push_client_send(client, &n, 0, &err), text)
    /* device token */
    n = notification(); n.device_token = NULL; SEND(PUSH_E_BAD_DEVICE_TOKEN, "device_token and channel_id are both NULL");
    n = notification(); n.device_token = "abc"; SEND(PUSH_E_BAD_DEVICE_TOKEN, "odd");
    n = notification(); n.device_token = "zz"; SEND(PUSH_E_BAD_DEVICE_TOKEN, "non-hex");
    n = notification(); n.device_token = "\xff\xfe"; SEND(PUSH_E_BAD_DEVICE_TOKEN, "non-hex");
    n = notification(); n.device_token = tok; n.device_token_len = 10 * 1024 * 1024; SEND(PUSH_E_BAD_DEVICE_TOKEN, "longer than");
    n = notification(); n.device_token = tok; n.device_token_len = (size_t)-1; SEND(PUSH_E_BAD_DEVICE_TOKEN, "not a length");
    n = notification(); n.device_token = tok; n.device_token_len = (size_t)PTRDIFF_MAX; SEND(PUSH_E_BAD_DEVICE_TOKEN, "longer than");
    /* topic */
    n = notification(); n.topic = "com.ex\xc3\xa4mple"; SEND(PUSH_E_BAD_TOPIC, "non-ASCII");
    n = notification(); n.topic = "\xff"; SEND(PUSH_E_BAD_TOPIC, "non-ASCII");
    n = notification(); n.topic = small; n.topic_len = 10 * 1024 * 1024; SEND(PUSH_E_BAD_TOPIC, "longer than");
    n = notification(); n.topic = small; n.topic_len = (size_t)-5; SEND(PUSH_E_BAD_TOPIC, "not a length");
    n = notification(); n.topic = "com.example.app"; n.push_type = PUSH_TYPE_VOIP; SEND(PUSH_E_BAD_TOPIC, ".voip");
    /* payload */
    n = notification(); n.payload = NULL; SEND(PUSH_E_BAD_PAYLOAD, "NULL");
    n = notification(); n.payload = ""; SEND(PUSH_E_BAD_PAYLOAD, "empty");
    n = notification(); n.payload = "[1]"; SEND(PUSH_E_BAD_PAYLOAD, "object");
    n = notification(); n.payload = "{\"aps\":{\"alert\":\"\xc3\x28\"}}"; SEND(PUSH_E_BAD_PAYLOAD, "UTF-8");
    n = notification(); n.payload = "{\"aps\":{\"alert\":\"\xed\xa0\x80\"}}"; SEND(PUSH_E_BAD_PAYLOAD, "UTF-8"); /* a surrogate */
    n = notification(); n.payload = small; n.payload_len = 10 * 1024 * 1024; SEND(PUSH_E_PAYLOAD_TOO_LARGE, "10485760 bytes");
    n = notification(); n.payload = small; n.payload_len = (size_t)-1; SEND(PUSH_E_PAYLOAD_TOO_LARGE, "not a length");
    size_t big = 10 * 1024 * 1024;
    char *huge = malloc(big + 1);
    memset(huge, ' ', big);
    huge[0] = '{';
    huge[big - 1] = '}';
    huge[big] = 0;
    double start = now_seconds();
    n = notification(); n.payload = huge; n.payload_len = big; SEND(PUSH_E_PAYLOAD_TOO_LARGE, "allows 4096");
    n = notification(); n.payload = huge; SEND(PUSH_E_PAYLOAD_TOO_LARGE, "allows 4096"); /* NUL-terminated */
    double took = now_seconds() - start;
    EXPECT(took < 0.5, "a 10 MB payload is refused at once (%.3f s)", took);
    free(huge);
    /* collapse id, apns-id */
    n = notification(); n.collapse_id = small; n.collapse_id_len = 1 << 20; SEND(PUSH_E_BAD_COLLAPSE_ID, "at most 64");
    n = notification(); n.collapse_id = small; n.collapse_id_len = (size_t)-1; SEND(PUSH_E_BAD_COLLAPSE_ID, "not a length");
    n = notification(); n.collapse_id = "a\r\nb"; SEND(PUSH_E_BAD_COLLAPSE_ID, "CR or LF");
    n = notification(); n.collapse_id = "a\0b"; n.collapse_id_len = 3; SEND(PUSH_E_BAD_COLLAPSE_ID, "NUL");
    n = notification(); n.apns_id = small; n.apns_id_len = 1 << 20; SEND(PUSH_E_BAD_APNS_ID, "36-character");
    n = notification(); n.apns_id = small; n.apns_id_len = (size_t)-1; SEND(PUSH_E_BAD_APNS_ID, "not a length");
    n = notification(); n.apns_id = "123e4567-e89b-12d3-a456-42661417400g"; SEND(PUSH_E_BAD_APNS_ID, "UUID");
    n = notification(); n.apns_id = "123e4567\xff""e89b-12d3-a456-426614174000"; SEND(PUSH_E_BAD_APNS_ID, "UUID");
    /* numbers */
    n = notification(); n.push_type = 99; SEND(PUSH_E_BAD_PUSH_TYPE, "99");
    n = notification(); n.push_type = -1; SEND(PUSH_E_BAD_PUSH_TYPE, "-1");
    n = notification(); n.priority = 7; SEND(PUSH_E_BAD_PRIORITY, "10, 5 or 1");
    n = notification(); n.priority = INT32_MIN; SEND(PUSH_E_BAD_PRIORITY, "10, 5 or 1");
    n = notification(); n.flags = PUSH_NOTIFICATION_HAS_EXPIRATION; n.expiration = -5; SEND(PUSH_E_BAD_EXPIRATION, "-5");
    n = notification(); n.struct_size = 4; SEND(PUSH_E_INVALID_ARGUMENT, "struct_size");
    /* in a batch: the prefix before the bad one is queued, the message names its index */
    push_notification batch[3] = {notification(), notification(), notification()};
    batch[2].device_token = "abc";
    ptrdiff_t accepted = -1;
    CHECK_MSG(PUSH_E_BAD_DEVICE_TOKEN, push_client_send_batch(client, batch, 3, 0, &accepted, &err), "notification 2");
    EXPECT(accepted == 2, "accepted %td", accepted);
#undef SEND
    /* refused notifications get no result: only the two of the batch come back (cancelled) */
    push_client_close(client, 0);
    push_result r[8];
    ptrdiff_t got = 0, total = 0;
    while (push_client_poll(client, r, 8, sizeof r[0], 0, &got) == PUSH_OK && got > 0) total += got;
    EXPECT(total == 2, "results %td", total);
    push_client_free(client);
    report(__func__, ok);
}

static void test_payload_builder_and_topic_helper_refuse_bad_input(void) {
    ok = 1;
    push_payload_t p = push_payload_new();
    const char *small = guarded("abcd", 4);
    char buf[256];
    ptrdiff_t len = 99;
    /* NULL payload everywhere */
    CHECK(PUSH_E_INVALID_ARGUMENT, push_payload_set_string(NULL, PUSH_PAYLOAD_ALERT_BODY, "x", 0, &err));
    CHECK(PUSH_E_INVALID_ARGUMENT, push_payload_add_loc_arg(NULL, PUSH_PAYLOAD_ALERT_LOC_ARGS, "x", 0, &err));
    CHECK(PUSH_E_INVALID_ARGUMENT, push_payload_set_int(NULL, PUSH_PAYLOAD_BADGE, 1, &err));
    CHECK(PUSH_E_INVALID_ARGUMENT, push_payload_set_double(NULL, PUSH_PAYLOAD_RELEVANCE_SCORE, 0.5, &err));
    CHECK(PUSH_E_INVALID_ARGUMENT, push_payload_set_critical_sound(NULL, "x", 0, 0.5, &err));
    CHECK(PUSH_E_INVALID_ARGUMENT, push_payload_set_raw(NULL, PUSH_PAYLOAD_CONTENT_STATE, "{}", 0, &err));
    CHECK(PUSH_E_INVALID_ARGUMENT, push_payload_set_custom(NULL, "k", 0, "1", 0, &err));
    CHECK(PUSH_E_INVALID_ARGUMENT, push_payload_clear(NULL, PUSH_PAYLOAD_BADGE, &err));
    CHECK(PUSH_E_INVALID_ARGUMENT, push_payload_build(NULL, buf, sizeof buf, &len, &err));
    push_payload_free(NULL);
    /* NULL values where one is required (a NULL string value removes the field: allowed) */
    CHECK(PUSH_OK, push_payload_set_string(p, PUSH_PAYLOAD_ALERT_BODY, NULL, 0, &err));
    CHECK(PUSH_OK, push_payload_set_raw(p, PUSH_PAYLOAD_CONTENT_STATE, NULL, 0, &err));
    CHECK_MSG(PUSH_E_INVALID_ARGUMENT, push_payload_add_loc_arg(p, PUSH_PAYLOAD_ALERT_LOC_ARGS, NULL, 0, &err), "NULL");
    CHECK_MSG(PUSH_E_INVALID_ARGUMENT, push_payload_set_critical_sound(p, NULL, 0, 0.5, &err), "NULL");
    CHECK_MSG(PUSH_E_INVALID_ARGUMENT, push_payload_set_custom(p, NULL, 0, "1", 0, &err), "NULL");
    CHECK_MSG(PUSH_E_INVALID_ARGUMENT, push_payload_set_custom(p, "k", 0, NULL, 0, &err), "NULL");
    CHECK_MSG(PUSH_E_INVALID_ARGUMENT, push_payload_build(p, buf, sizeof buf, NULL, &err), "out_length");
    /* negative and absurd lengths, read-free */
    CHECK(PUSH_E_INVALID_ARGUMENT, push_payload_set_string(p, PUSH_PAYLOAD_ALERT_BODY, small, -1, &err));
    CHECK(PUSH_E_INVALID_ARGUMENT, push_payload_add_loc_arg(p, PUSH_PAYLOAD_ALERT_LOC_ARGS, small, PTRDIFF_MIN, &err));
    CHECK(PUSH_E_INVALID_ARGUMENT, push_payload_set_critical_sound(p, small, -2, 0.5, &err));
    CHECK(PUSH_E_INVALID_ARGUMENT, push_payload_set_raw(p, PUSH_PAYLOAD_CONTENT_STATE, small, -1, &err));
    CHECK(PUSH_E_INVALID_ARGUMENT, push_payload_set_custom(p, small, -1, "1", 0, &err));
    CHECK(PUSH_E_INVALID_ARGUMENT, push_payload_set_custom(p, "k", 0, small, -1, &err));
    CHECK(PUSH_E_INVALID_ARGUMENT, push_payload_build(p, buf, -1, &len, &err));
    ptrdiff_t huge_lengths[] = {5121, 10 * 1024 * 1024, PTRDIFF_MAX};
    for (size_t i = 0; i < 3; i++) {
        ptrdiff_t h = huge_lengths[i];
        CHECK_MSG(PUSH_E_PAYLOAD_TOO_LARGE, push_payload_set_string(p, PUSH_PAYLOAD_ALERT_BODY, small, h, &err), "longer than 5120");
        CHECK(PUSH_E_PAYLOAD_TOO_LARGE, push_payload_add_loc_arg(p, PUSH_PAYLOAD_ALERT_LOC_ARGS, small, h, &err));
        CHECK(PUSH_E_PAYLOAD_TOO_LARGE, push_payload_set_critical_sound(p, small, h, 0.5, &err));
        CHECK(PUSH_E_PAYLOAD_TOO_LARGE, push_payload_set_raw(p, PUSH_PAYLOAD_CONTENT_STATE, small, h, &err));
        CHECK(PUSH_E_PAYLOAD_TOO_LARGE, push_payload_set_custom(p, small, h, "1", 0, &err));
        CHECK(PUSH_E_PAYLOAD_TOO_LARGE, push_payload_set_custom(p, "k", 0, small, h, &err));
    }
    size_t big = 10 * 1024 * 1024;
    char *huge = malloc(big + 1);
    memset(huge, 'a', big);
    huge[big] = 0;
    CHECK_MSG(PUSH_E_PAYLOAD_TOO_LARGE, push_payload_set_string(p, PUSH_PAYLOAD_ALERT_BODY, huge, 0, &err), "longer than");
    free(huge);
    /* field numbers of the wrong kind or none at all */
    int32_t fields[] = {0, -1, 999, INT32_MIN};
    for (size_t i = 0; i < 4; i++) {
        CHECK(PUSH_E_INVALID_ARGUMENT, push_payload_set_string(p, fields[i], "x", 0, &err));
        CHECK(PUSH_E_INVALID_ARGUMENT, push_payload_add_loc_arg(p, fields[i], "x", 0, &err));
        CHECK(PUSH_E_INVALID_ARGUMENT, push_payload_set_int(p, fields[i], 1, &err));
        CHECK(PUSH_E_INVALID_ARGUMENT, push_payload_set_double(p, fields[i], 0.5, &err));
        CHECK(PUSH_E_INVALID_ARGUMENT, push_payload_set_raw(p, fields[i], "{}", 0, &err));
        CHECK(PUSH_E_INVALID_ARGUMENT, push_payload_clear(p, fields[i], &err));
    }
    CHECK(PUSH_E_INVALID_ARGUMENT, push_payload_set_string(p, PUSH_PAYLOAD_BADGE, "x", 0, &err));
    CHECK(PUSH_E_INVALID_ARGUMENT, push_payload_set_int(p, PUSH_PAYLOAD_ALERT_BODY, 1, &err));
    CHECK(PUSH_E_INVALID_ARGUMENT, push_payload_set_raw(p, PUSH_PAYLOAD_ALERT_BODY, "{}", 0, &err));
    /* invalid UTF-8, values out of range, JSON that is not */
    CHECK_MSG(PUSH_E_BAD_PAYLOAD, push_payload_set_string(p, PUSH_PAYLOAD_ALERT_BODY, "caf\xc3", 0, &err), "UTF-8");
    CHECK_MSG(PUSH_E_BAD_PAYLOAD, push_payload_add_loc_arg(p, PUSH_PAYLOAD_ALERT_LOC_ARGS, "\xff", 0, &err), "UTF-8");
    CHECK(PUSH_E_BAD_PAYLOAD, push_payload_set_critical_sound(p, "\xed\xa0\x80", 0, 0.5, &err));
    CHECK(PUSH_E_BAD_PAYLOAD, push_payload_set_custom(p, "k\xff", 0, "1", 0, &err));
    CHECK(PUSH_E_BAD_PAYLOAD, push_payload_set_custom(p, "k", 0, "\"\xff\"", 0, &err));
    CHECK(PUSH_E_BAD_PAYLOAD, push_payload_set_custom(p, "aps", 0, "1", 0, &err));
    CHECK(PUSH_E_BAD_PAYLOAD, push_payload_set_raw(p, PUSH_PAYLOAD_CONTENT_STATE, "{\"a\":", 0, &err));
    CHECK(PUSH_E_BAD_PAYLOAD, push_payload_set_raw(p, PUSH_PAYLOAD_CONTENT_STATE, "[]", 0, &err));
    CHECK(PUSH_E_BAD_PAYLOAD, push_payload_set_string(p, PUSH_PAYLOAD_INTERRUPTION_LEVEL, "loud", 0, &err));
    CHECK(PUSH_E_BAD_PAYLOAD, push_payload_set_int(p, PUSH_PAYLOAD_BADGE, -1, &err));
    CHECK(PUSH_E_BAD_PUSH_TYPE, push_payload_set_int(p, PUSH_PAYLOAD_PUSH_TYPE, 99, &err));
    CHECK(PUSH_E_BAD_PUSH_TYPE, push_payload_set_int(p, PUSH_PAYLOAD_PUSH_TYPE, INT64_MAX, &err));
    CHECK(PUSH_E_BAD_PAYLOAD, push_payload_set_double(p, PUSH_PAYLOAD_RELEVANCE_SCORE, NAN, &err));
    CHECK(PUSH_E_BAD_PAYLOAD, push_payload_set_double(p, PUSH_PAYLOAD_RELEVANCE_SCORE, INFINITY, &err));
    CHECK(PUSH_E_BAD_PAYLOAD, push_payload_set_critical_sound(p, "x", 0, 2.0, &err));
    CHECK(PUSH_E_BAD_PAYLOAD, push_payload_set_critical_sound(p, "x", 0, NAN, &err));
    /* nothing of the above changed the payload */
    CHECK(PUSH_OK, push_payload_build(p, buf, sizeof buf, &len, &err));
    EXPECT(strcmp(buf, "{\"aps\":{}}") == 0, "still empty: %s", buf);
    CHECK_MSG(PUSH_E_BUFFER_TOO_SMALL, push_payload_build(p, buf, 3, &len, &err), "needs 11 bytes");
    CHECK(PUSH_E_BUFFER_TOO_SMALL, push_payload_build(p, buf, 0, &len, &err));
    push_payload_free(p);

    /* topic helper */
    CHECK(PUSH_E_INVALID_ARGUMENT, push_topic_for(NULL, 0, PUSH_TYPE_VOIP, buf, sizeof buf, &len, &err));
    CHECK(PUSH_E_INVALID_ARGUMENT, push_topic_for("com.example.app", 0, PUSH_TYPE_VOIP, buf, sizeof buf, NULL, &err));
    CHECK(PUSH_E_INVALID_ARGUMENT, push_topic_for(small, -1, PUSH_TYPE_VOIP, buf, sizeof buf, &len, &err));
    CHECK(PUSH_E_INVALID_ARGUMENT, push_topic_for("a.b", 0, PUSH_TYPE_VOIP, buf, -1, &len, &err));
    CHECK_MSG(PUSH_E_BAD_TOPIC, push_topic_for(small, 10 * 1024 * 1024, PUSH_TYPE_VOIP, buf, sizeof buf, &len, &err), "longer than");
    CHECK_MSG(PUSH_E_BAD_TOPIC, push_topic_for(small, PTRDIFF_MAX, PUSH_TYPE_VOIP, buf, sizeof buf, &len, &err), "longer than");
    CHECK(PUSH_E_BAD_TOPIC, push_topic_for("com.\xff", 0, PUSH_TYPE_VOIP, buf, sizeof buf, &len, &err));
    CHECK(PUSH_E_BAD_TOPIC, push_topic_for("", 0, PUSH_TYPE_VOIP, buf, sizeof buf, &len, &err));
    CHECK(PUSH_E_BAD_TOPIC, push_topic_for("a.b", 0, PUSH_TYPE_MDM, buf, sizeof buf, &len, &err));
    CHECK(PUSH_E_BAD_PUSH_TYPE, push_topic_for("a.b", 0, 99, buf, sizeof buf, &len, &err));
    CHECK(PUSH_E_BUFFER_TOO_SMALL, push_topic_for("a.b", 0, PUSH_TYPE_VOIP, buf, 4, &len, &err));
    CHECK(PUSH_OK, push_topic_for("a.b", 0, PUSH_TYPE_VOIP, NULL, 0, &len, &err));
    EXPECT(len == 8, "length only: %td", len);
    report(__func__, ok);
}

static void test_channel_functions_refuse_bad_input(void) {
    ok = 1;
    push_config_t cfg = good_config();
    push_channels_t ch = NULL;
    push_client_t client = good_client();
    EXPECT(cfg && client, "handles");
    if (!cfg || !client) { report(__func__, ok); return; }
    /* open */
    CHECK(PUSH_E_INVALID_ARGUMENT, push_channels_open(NULL, "127.0.0.1", 0, refused_port, &ch, &err));
    CHECK_MSG(PUSH_E_INVALID_ARGUMENT, push_channels_open(cfg, "127.0.0.1", 0, refused_port, NULL, &err), "channels_out");
    CHECK(PUSH_E_INVALID_ARGUMENT, push_channels_open((push_config_t)(void *)client, "127.0.0.1", 0, 1, &ch, &err));
    CHECK_MSG(PUSH_E_BAD_OPTION, push_channels_open(cfg, NULL, 0, 0, &ch, &err), "no channel management host");
    CHECK_MSG(PUSH_E_BAD_OPTION, push_channels_open(cfg, "127.0.0.1", 0, 0, &ch, &err), "port");
    CHECK(PUSH_E_BAD_OPTION, push_channels_open(cfg, "127.0.0.1", 0, 70000, &ch, &err));
    CHECK(PUSH_E_INVALID_ARGUMENT, push_channels_open(cfg, "127.0.0.1", -1, 1, &ch, &err));
    CHECK(PUSH_E_BAD_OPTION, push_channels_open(cfg, guarded("h", 1), 100000, 1, &ch, &err));
    EXPECT(ch == NULL, "no handle after refusals");
    CHECK(PUSH_OK, push_channels_open(cfg, "127.0.0.1", 0, refused_port, &ch, &err));
    if (!ch) { report(__func__, ok); return; }
    char id[PUSH_CHANNEL_ID_CAPACITY];
    ptrdiff_t id_len = 5;
    int32_t policy = 3;
    push_channel_result result;
    memset(&result, 0, sizeof result);
    push_channel_ids *list = (push_channel_ids *)(void *)&result;
    const char *good_id = "dHN0LXNyY2gtY2hubA==";
    /* create */
    CHECK(PUSH_E_INVALID_ARGUMENT, push_channel_create(NULL, "com.example.app", 0, 0, id, sizeof id, &id_len, NULL, 100, &err));
    EXPECT(id_len == 0, "no id length after a refusal");
    CHECK_MSG(PUSH_E_INVALID_ARGUMENT, push_channel_create((push_channels_t)(void *)client, "a", 0, 0, id, sizeof id, NULL, NULL, 100, &err),
              "not a push_channels_t");
    CHECK_MSG(PUSH_E_BAD_TOPIC, push_channel_create(ch, NULL, 0, 0, id, sizeof id, NULL, NULL, 100, &err), "bundle_id is NULL");
    CHECK(PUSH_E_BAD_TOPIC, push_channel_create(ch, guarded("com", 3), 10000000, 0, id, sizeof id, NULL, NULL, 100, &err));
    CHECK(PUSH_E_BAD_TOPIC, push_channel_create(ch, "com.example/app", 0, 0, id, sizeof id, NULL, NULL, 100, &err));
    CHECK(PUSH_E_BAD_TOPIC, push_channel_create(ch, "", 0, 0, id, sizeof id, NULL, NULL, 100, &err));
    CHECK_MSG(PUSH_E_INVALID_ARGUMENT, push_channel_create(ch, "com.example.app", 0, 2, id, sizeof id, NULL, NULL, 100, &err),
              "storage policy");
    CHECK_MSG(PUSH_E_BUFFER_TOO_SMALL, push_channel_create(ch, "com.example.app", 0, 0, id, 24, NULL, NULL, 100, &err),
              "PUSH_CHANNEL_ID_CAPACITY");
    CHECK(PUSH_E_INVALID_ARGUMENT, push_channel_create(ch, "com.example.app", 0, 0, NULL, sizeof id, NULL, NULL, 100, &err));
    /* `result` is filled whatever the outcome: an earlier call's answer never stays in it */
    memset(&result, 0, sizeof result);
    result.struct_size = sizeof result;
    result.status = 201;
    CHECK(PUSH_E_INVALID_ARGUMENT, push_channel_create(ch, "com.example.app", 0, 0, NULL, sizeof id, NULL, &result, 100, &err));
    EXPECT(result.status == 0 && result.struct_size == sizeof result, "create refused early: result cleared (status %d)", result.status);
    result.status = 200;
    CHECK(PUSH_E_INVALID_ARGUMENT, push_channel_list(ch, "com.example.app", 0, NULL, &result, 100, &err));
    EXPECT(result.status == 0, "list refused early: result cleared (status %d)", result.status);
    CHECK_MSG(PUSH_E_BAD_TOPIC, push_channel_list(ch, "com.example.app", -1, &list, NULL, 100, &err), "negative");
    result.struct_size = 8;
    CHECK_MSG(PUSH_E_INVALID_ARGUMENT, push_channel_create(ch, "com.example.app", 0, 0, id, sizeof id, NULL, &result, 100, &err),
              "struct_size");
    /* read, delete, list */
    CHECK(PUSH_E_INVALID_ARGUMENT, push_channel_read(NULL, "com.example.app", 0, good_id, 0, &policy, NULL, 100, &err));
    EXPECT(policy == -1, "no policy after a refusal");
    CHECK_MSG(PUSH_E_BAD_CHANNEL_ID, push_channel_read(ch, "com.example.app", 0, NULL, 0, &policy, NULL, 100, &err), "NULL");
    CHECK(PUSH_E_BAD_CHANNEL_ID, push_channel_read(ch, "com.example.app", 0, "abc", 0, &policy, NULL, 100, &err));
    CHECK(PUSH_E_BAD_CHANNEL_ID, push_channel_read(ch, "com.example.app", 0, "abc?", 0, &policy, NULL, 100, &err));
    CHECK(PUSH_E_BAD_CHANNEL_ID, push_channel_read(ch, "com.example.app", 0, guarded("abcd", 4), 1 << 20, &policy, NULL, 100, &err));
    CHECK(PUSH_E_BAD_CHANNEL_ID, push_channel_read(ch, "com.example.app", 0, good_id, -1, &policy, NULL, 100, &err));
    CHECK(PUSH_E_INVALID_ARGUMENT, push_channel_delete(NULL, "com.example.app", 0, good_id, 0, NULL, 100, &err));
    CHECK(PUSH_E_BAD_CHANNEL_ID, push_channel_delete(ch, "com.example.app", 0, NULL, 0, NULL, 100, &err));
    CHECK(PUSH_E_BAD_TOPIC, push_channel_delete(ch, "com.example.app.push-type.liveactivity", 0, good_id, 0, NULL, 100, &err));
    CHECK_MSG(PUSH_E_INVALID_ARGUMENT, push_channel_list(ch, "com.example.app", 0, NULL, NULL, 100, &err), "list is NULL");
    CHECK(PUSH_E_INVALID_ARGUMENT, push_channel_list(NULL, "com.example.app", 0, &list, NULL, 100, &err));
    EXPECT(list == NULL, "no list after a refusal");
    /* a management host that refuses connections: a clear error, then the back-off */
    memset(&result, 0, sizeof result);
    CHECK_MSG(PUSH_E_CONNECT, push_channel_list(ch, "com.example.app", 0, &list, &result, 2000, &err), "cannot connect");
    EXPECT(result.status == 0 && result.struct_size == sizeof result, "no answer: status 0");
    CHECK_MSG(PUSH_E_CONNECT, push_channel_list(ch, "com.example.app", 0, &list, &result, 100, &err), "backing off");
    push_channel_ids_free(NULL);
    push_channels_free(NULL);
    push_channels_free((push_channels_t)(void *)client); /* ignored: not a push_channels_t */
    push_channels_free(ch);
    /* broadcasts: a channel id length beyond any valid one is refused before it is read */
    push_notification n;
    memset(&n, 0, sizeof n);
    n.struct_size = sizeof n;
    n.push_type = PUSH_TYPE_LIVEACTIVITY;
    n.flags = PUSH_NOTIFICATION_HAS_EXPIRATION;
    n.payload = "{}";
    n.channel_id = guarded("abcd", 4);
    n.channel_id_len = 1 << 20;
    CHECK_MSG(PUSH_E_BAD_CHANNEL_ID, push_client_send(client, &n, 0, &err), "longer than");
    n.channel_id_len = (size_t)-1;
    CHECK_MSG(PUSH_E_BAD_CHANNEL_ID, push_client_send(client, &n, 0, &err), "not a length");
    n.struct_size = 12;
    CHECK_MSG(PUSH_E_INVALID_ARGUMENT, push_client_send(client, &n, 0, &err), "struct_size");
    push_client_close(client, 0);
    push_client_free(client);
    push_config_free(cfg);
    report(__func__, ok);
}

int main(void) {
    pki = getenv("SWIFTPUSH_TEST_PKI");
    if (!pki) {
        fprintf(stderr, "run through Tests/c/run.sh (needs SWIFTPUSH_TEST_PKI)\n");
        return 2;
    }
    /* A loopback port that refuses connections: bound, never listening, kept for the run. */
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t alen = sizeof a;
    if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof a) != 0 || getsockname(s, (struct sockaddr *)&a, &alen) != 0) {
        perror("socket");
        return 2;
    }
    refused_port = ntohs(a.sin_port);
    /* the second line of the key file: base64 of the key itself */
    size_t len;
    const char *key = read_file(path("AuthKey_TESTKEY001.p8"), &len);
    const char *line = strchr(key, '\n');
    if (line) snprintf(key_body_line, sizeof key_body_line, "%.24s", line + 1);

    test_static_functions_answer_every_value();
    test_config_functions_refuse_NULL_arguments();
    test_config_strings_refuse_bad_lengths_without_reading_them();
    test_config_strings_must_be_UTF8_without_NUL();
    test_config_options_out_of_range_are_refused();
    test_corrupt_and_wrong_type_keys_and_certificates_fail_without_quoting_them();
    test_client_functions_refuse_NULL_and_absurd_sizes();
    test_handles_of_the_wrong_kind_are_refused();
    test_invalid_notifications_are_refused_with_the_field_named();
    test_payload_builder_and_topic_helper_refuse_bad_input();
    test_channel_functions_refuse_bad_input();
    close(s);
    return finish("bad-input");
}
