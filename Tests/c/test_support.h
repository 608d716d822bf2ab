/* What the C test programs share: a test is a function with `int ok = 1;` in scope; EXPECT notes
 * a failed expectation (its line, the condition and a printf-style explanation) in that `ok`,
 * report() counts the test as passed or failed, finish() prints the tally and gives main's exit
 * status. Each program is one translation unit, so the counters are simply static. */
#ifndef SWIFTPUSH_TEST_SUPPORT_H
#define SWIFTPUSH_TEST_SUPPORT_H

#include <stdio.h>

static int passed, failed;

#define EXPECT(cond, ...)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            printf("    expectation failed at line %d: %s: ", __LINE__, #cond);                   \
            printf(__VA_ARGS__);                                                                   \
            printf("\n");                                                                          \
            ok = 0;                                                                                \
        }                                                                                          \
    } while (0)

/* Counts the test `name` and prints its verdict. */
static inline void report(const char *name, int ok) {
    printf("%s: %s\n", ok ? "ok" : "FAILED", name);
    if (ok) passed++; else failed++;
}

/* Prints "<suite>: N passed, M failed"; returns main's exit status (1 when any test failed). */
static inline int finish(const char *suite) {
    printf("%s: %d passed, %d failed\n", suite, passed, failed);
    return failed == 0 ? 0 : 1;
}

#endif
