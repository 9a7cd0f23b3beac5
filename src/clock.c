/* clock.c - monotonic time and monotonic condition-variable waits. */
#include "internal.h"

#include <errno.h>
#include <time.h>

uint64_t ln__now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t ln_now_ns(void) {
    return ln__now_ns();
}

int ln__cond_init_monotonic(pthread_cond_t *cond) {
    pthread_condattr_t attr;
    int rc = pthread_condattr_init(&attr);
    if (rc != 0) return rc;
    rc = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    if (rc == 0) rc = pthread_cond_init(cond, &attr);
    pthread_condattr_destroy(&attr);
    return rc;
}

int ln__cond_timedwait_ns(pthread_cond_t *cond, pthread_mutex_t *mu, uint64_t deadline_ns) {
    struct timespec ts = {(time_t)(deadline_ns / 1000000000u), (long)(deadline_ns % 1000000000u)};
    int rc = pthread_cond_timedwait(cond, mu, &ts);
    return rc == ETIMEDOUT ? ETIMEDOUT : 0;
}
