/* internal.h - helpers shared by lanes' own sources; not API. */
#ifndef LN_INTERNAL_H
#define LN_INTERNAL_H

#include <lanes.h>

#include <stddef.h>
#include <stdint.h>

/* The functions declared here are LN_EXTERN: liblanes.so exports them under
 * their ln__ names (no installed header declares them) because
 * liblanes-jobs.so calls them, and must share the core's allocator state
 * rather than compile a copy (src/jobs/CMakeLists.txt). Everything else
 * internal to liblanes is hidden. */

/* The allocator chosen with ln_set_allocator (libc by default). Every
 * allocation inside liblanes goes through these, so a test can fail the Nth
 * one and check for LN_ENOMEM and no leak. */
LN_EXTERN void *ln__malloc(size_t size);
LN_EXTERN void *ln__calloc(size_t count, size_t size);
LN_EXTERN void *ln__realloc(void *ptr, size_t size);
LN_EXTERN void ln__free(void *ptr);
LN_EXTERN char *ln__strdup(const char *s); /* NULL for NULL or no memory */

/* Cache line size used to keep producer and consumer fields apart. */
#define LN_CACHE_LINE 64

/* 1 if member b of struct T lies on a later cache line than member a, for
 * any address of T with malloc's (at least 8-byte) alignment: b starts at
 * least a line after the 8-byte word that holds a's last byte. For
 * _Static_assert on the padding that keeps hot fields apart. */
#define LN_LINES_APART(T, a, b)                                                                    \
    (offsetof(T, b) + 8 >=                                                                         \
     ((offsetof(T, a) + sizeof(((T *)0)->a) + 7) & ~(size_t)7) + LN_CACHE_LINE)

#define LN_IS_POW2(n) ((n) != 0 && ((n) & ((n)-1)) == 0)

/* LN_ASSERT(cond): an invariant, checked when LN_DEBUG is defined non-zero
 * (Debug and sanitizer builds); otherwise compiled out, but the expression
 * is still type-checked and never evaluated. A failure writes one line to
 * stderr (file, line, expression) and aborts. */
#if defined(LN_DEBUG) && (LN_DEBUG + 0)
#define LN_ASSERT(cond) ((cond) ? (void)0 : ln__assert_fail(#cond, __FILE__, __LINE__))
#else
#define LN_ASSERT(cond) ((void)sizeof((cond) ? 1 : 0))
#endif
#if defined(__GNUC__)
__attribute__((noreturn, cold))
#endif
void ln__assert_fail(const char *expr, const char *file, int line);

#define LN_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define LN_UNUSED(x) ((void)(x))

/* Monotonic time in ns (CLOCK_MONOTONIC). */
LN_EXTERN uint64_t ln__now_ns(void);

/* pthread_cond_t bound to CLOCK_MONOTONIC, for timed waits. */
#include <pthread.h>
LN_EXTERN int ln__cond_init_monotonic(pthread_cond_t *cond);
/* Timed wait until an absolute CLOCK_MONOTONIC deadline in ns: 0 or
 * ETIMEDOUT (positive errno, as pthread returns). */
LN_EXTERN int ln__cond_timedwait_ns(pthread_cond_t *cond, pthread_mutex_t *mu,
                                    uint64_t deadline_ns);

#endif
