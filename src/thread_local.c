/* thread_local.c - the pool's per-thread state; see thread_local.h. */
#include "thread_local.h"

#include <stdatomic.h>

static _Thread_local ln_pool *tl_pool;
static _Thread_local int tl_lane = -1;
_Thread_local uint64_t ln__tl_self_id LN_TLS_FAST;
_Thread_local unsigned ln__tl_submits LN_TLS_FAST;
_Thread_local void *ln__tl_worker LN_TLS_FAST;

uint64_t ln__self_id_assign(void) {
    static _Atomic uint64_t next_id = 1;
    /* relaxed: the ids only need to be distinct. */
    ln__tl_self_id = atomic_fetch_add_explicit(&next_id, 1, memory_order_relaxed);
    LN_ASSERT(ln__tl_self_id != 0); /* 0 means "no owner" (lane.h) */
    return ln__tl_self_id;
}

ln_pool *ln__current_pool(void) {
    return tl_pool;
}
int ln__current_lane(void) {
    return tl_lane;
}
void ln__set_current(ln_pool *pool, int lane) {
    tl_pool = pool;
    tl_lane = lane;
}
