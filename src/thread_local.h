/* thread_local.h - the pool's per-thread state: the calling thread's id,
 * its submit counter, and the pool and lane it works for. Not API. */
#ifndef LN_THREAD_LOCAL_H
#define LN_THREAD_LOCAL_H

#include "internal.h"

#if defined(__GNUC__)
#define LN_TLS_FAST __attribute__((tls_model("initial-exec")))
#else
#define LN_TLS_FAST
#endif

/* A nonzero id of the calling thread, unique in the process and never
 * reused (pthread_t values are): who owns a lane's ring, or a group's
 * submit counter. A thread-local read after the first call. */
extern _Thread_local uint64_t ln__tl_self_id LN_TLS_FAST;
uint64_t ln__self_id_assign(void);
static inline uint64_t ln__self_id(void) {
    uint64_t id = ln__tl_self_id;
    return id != 0 ? id : ln__self_id_assign();
}

/* Submits made by this thread so far: which of them carry a timestamp
 * (ln__enq_stamp, submit.h). */
extern _Thread_local unsigned ln__tl_submits LN_TLS_FAST;

/* The calling worker thread's ln__thread (lane.h), or NULL on threads that
 * are not workers: a submit reads it to decide, for one TLS load, whether
 * it may be a fork into the worker's own deque (lane_thread.c). */
extern _Thread_local void *ln__tl_worker LN_TLS_FAST;

/* The pool and lane of the calling worker thread, or NULL / -1. */
ln_pool *ln__current_pool(void);
int ln__current_lane(void);
void ln__set_current(ln_pool *pool, int lane);

#endif
