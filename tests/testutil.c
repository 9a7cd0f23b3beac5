/* testutil.c - forked test runner with timeouts, and a failing allocator. */
#include "testutil.h"

#include <lanes.h>

#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

void ln_test_fail(const char *file, int line, const char *expr) {
    fprintf(stderr, "%s:%d: CHECK failed: %s\n", file, line, expr);
    fflush(stderr);
    abort();
}

void ln_test_fail_eq(const char *file, int line, const char *a_expr, const char *b_expr,
                     long long a, long long b) {
    fprintf(stderr, "%s:%d: CHECK_EQ failed: %s == %s (%lld vs %lld)\n", file, line, a_expr, b_expr,
            a, b);
    fflush(stderr);
    abort();
}

void ln_test_skip(const char *reason, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    printf("skipped [%s]: ", reason);
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    fflush(NULL);
    _exit(77);
}

int ln_test_sanitized(void) {
    const char *s = getenv("LN_SANITIZED");
    return s != NULL && *s != '\0';
}

long ln_test_scale(long n, long div) {
    if (!ln_test_sanitized()) return n;
    long m = n / div;
    return m > 0 ? m : 1;
}

void ln_test_sleep_ms(unsigned ms) {
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

void *gate_task(void *arg) {
    gate *g = arg;
    pthread_mutex_lock(&g->mu);
    g->entered++;
    pthread_cond_broadcast(&g->cv);
    while (!g->open) pthread_cond_wait(&g->cv, &g->mu);
    pthread_mutex_unlock(&g->mu);
    return (void *)(uintptr_t)0x600d;
}

void gate_wait_entered(gate *g, int n) {
    pthread_mutex_lock(&g->mu);
    while (g->entered < n) pthread_cond_wait(&g->cv, &g->mu);
    pthread_mutex_unlock(&g->mu);
}

void gate_open(gate *g) {
    pthread_mutex_lock(&g->mu);
    g->open = 1;
    pthread_cond_broadcast(&g->cv);
    pthread_mutex_unlock(&g->mu);
}

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* The outcome of one case: 0 passed, 1 failed, 2 skipped. */
static int run_one(const ln_test_case *tc, unsigned timeout_s) {
    fflush(NULL);
    double t0 = now_ms();
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        return 1;
    }
    if (pid == 0) {
        alarm(timeout_s); /* SIGALRM kills a deadlocked case */
        tc->fn();
        fflush(NULL);
        _exit(0);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
    }
    double ms = now_ms() - t0;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        printf("ok   %-40s %8.1f ms\n", tc->name, ms);
        return 0;
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 77) {
        printf("skip %-40s\n", tc->name);
        return 2;
    }
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
        printf("FAIL %-40s timed out after %u s\n", tc->name, timeout_s);
    else if (WIFSIGNALED(status))
        printf("FAIL %-40s signal %d\n", tc->name, WTERMSIG(status));
    else
        printf("FAIL %-40s exit %d\n", tc->name, WEXITSTATUS(status));
    return 1;
}

int ln_test_run(int argc, char **argv, const ln_test_case *cases) {
    unsigned timeout = 60;
    const char *t = getenv("LN_TEST_TIMEOUT");
    if (t != NULL && atoi(t) > 0)
        timeout = (unsigned)atoi(t);
    else if (ln_test_sanitized())
        timeout *= 4;
    int failed = 0, skipped = 0, ran = 0;
    setvbuf(stdout, NULL, _IOLBF, 0);
    for (const ln_test_case *tc = cases; tc->name != NULL; tc++) {
        if (argc > 1 && strcmp(argv[1], tc->name) != 0) continue;
        int r = run_one(tc, timeout);
        failed += r == 1;
        skipped += r == 2;
        ran++;
    }
    if (ran == 0) {
        fprintf(stderr, "no test case matched\n");
        return 2;
    }
    printf("%d passed, %d failed, %d skipped\n", ran - failed - skipped, failed, skipped);
    if (failed) return 1;
    return skipped == ran ? 77 : 0;
}

/* ---- failing allocator ------------------------------------------------ */

static atomic_long alloc_calls, alloc_live, alloc_fail_at;

static int should_fail(void) {
    long n = atomic_fetch_add(&alloc_calls, 1) + 1;
    long at = atomic_load(&alloc_fail_at);
    return at > 0 && n >= at;
}

static void *t_malloc(size_t n) {
    if (should_fail()) return NULL;
    void *p = malloc(n);
    if (p) atomic_fetch_add(&alloc_live, 1);
    return p;
}
static void *t_calloc(size_t c, size_t n) {
    if (should_fail()) return NULL;
    void *p = calloc(c, n);
    if (p) atomic_fetch_add(&alloc_live, 1);
    return p;
}
static void *t_realloc(void *p, size_t n) {
    if (p == NULL) return t_malloc(n);
    if (should_fail()) return NULL;
    return realloc(p, n);
}
static void t_free(void *p) {
    if (p) atomic_fetch_sub(&alloc_live, 1);
    free(p);
}

void ln_test_alloc_install(long fail_at) {
    atomic_store(&alloc_calls, 0);
    atomic_store(&alloc_live, 0);
    atomic_store(&alloc_fail_at, fail_at);
    ln_set_allocator(t_malloc, t_realloc, t_calloc, t_free);
}
void ln_test_alloc_uninstall(void) {
    ln_reset_allocator();
}
long ln_test_alloc_live(void) {
    return atomic_load(&alloc_live);
}
long ln_test_alloc_calls(void) {
    return atomic_load(&alloc_calls);
}
