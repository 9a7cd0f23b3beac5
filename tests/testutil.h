/* testutil.h - a tiny test runner: each case runs in its own forked child
 * with a timeout (libuv's runner style), so a crash or deadlock fails that
 * case instead of the whole executable hanging.
 *
 *   TEST(name) { CHECK(x); CHECK_EQ(a, b); }
 *   int main(int argc, char **argv) { return ln_test_run(argc, argv, (ln_test_case[]){
 *       TESTCASE(name), ..., {0}}); }
 *
 * argv[1], if given, runs only the case of that name. LN_TEST_TIMEOUT (s)
 * overrides the per-case timeout (default 60 s; x4 when LN_SANITIZED set).
 *
 * A case that cannot run calls LN_SKIP(reason, fmt, ...): it prints
 * "skipped [reason]: ..." (the line scripts/test-skips.py looks for; the
 * reasons are listed in docs/build.md) and exits 77. The closing line is
 * "N passed, N failed, N skipped"; the program exits 1 when a case failed,
 * 77 (CTest: Skipped) when every case it ran skipped, else 0.
 */
#ifndef LN_TESTUTIL_H
#define LN_TESTUTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct ln_test_case {
    const char *name;
    void (*fn)(void);
} ln_test_case;

#define TEST(name) static void name(void)
#define TESTCASE(name)                                                                             \
    { #name, name }

void ln_test_fail(const char *file, int line, const char *expr);
void ln_test_fail_eq(const char *file, int line, const char *a_expr, const char *b_expr,
                     long long a, long long b);
int ln_test_run(int argc, char **argv, const ln_test_case *cases);

/* Skip the running case (in its forked child): print "skipped [reason]:
 * <message>" and exit 77. reason is one of docs/build.md's skip reasons. */
#if defined(__GNUC__)
__attribute__((noreturn, format(printf, 2, 3)))
#endif
void ln_test_skip(const char *reason, const char *fmt, ...);
#define LN_SKIP(...) ln_test_skip(__VA_ARGS__)

#define CHECK(c)                                                                                   \
    do {                                                                                           \
        if (!(c)) ln_test_fail(__FILE__, __LINE__, #c);                                            \
    } while (0)
#define CHECK_EQ(a, b)                                                                             \
    do {                                                                                           \
        long long a_ = (long long)(a), b_ = (long long)(b);                                        \
        if (a_ != b_) ln_test_fail_eq(__FILE__, __LINE__, #a, #b, a_, b_);                         \
    } while (0)

/* 1 when running under a sanitizer (LN_SANITIZED is set by CTest). */
int ln_test_sanitized(void);
/* Scale an iteration count down under sanitizers (divide by 'div'). */
long ln_test_scale(long n, long div);

/* A counting allocator for anomaly tests: after ln_test_alloc_install(n),
 * the nth allocation from now (1-based) and all after it fail (n = 0: none
 * fails). ln_test_alloc_live() is the number of blocks not yet freed,
 * ln_test_alloc_calls() the allocations attempted. Uninstall restores libc. */
void ln_test_alloc_install(long fail_at);
void ln_test_alloc_uninstall(void);
long ln_test_alloc_live(void);
long ln_test_alloc_calls(void);

/* Random numbers for stress tests (xorshift, per caller state). */
static inline uint64_t ln_test_rand(uint64_t *s) {
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

/* A gate tasks can block on until the test opens it: gate_task(&g) counts
 * itself in g.entered and waits for gate_open(&g); it returns 0x600d. */
#include <pthread.h>
typedef struct gate {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int open;
    int entered;
} gate;
#define GATE_INIT                                                                                  \
    { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0 }
void *gate_task(void *arg);
void gate_wait_entered(gate *g, int n); /* until n tasks entered */
void gate_open(gate *g);

/* Sleep for ms milliseconds. */
void ln_test_sleep_ms(unsigned ms);

#endif
