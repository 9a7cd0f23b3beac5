/* completion.h - the pool's completion list: work handed back to the
 * thread that runs ln_pool_run_completions (an event loop), woken through
 * an eventfd (completion.c). It knows nothing of what it carries: the
 * poster embeds an ln__completion and says how to run it. Not API. */
#ifndef LN_COMPLETION_H
#define LN_COMPLETION_H

#include "internal.h"

typedef struct ln__completion {
    struct ln__completion *next; /* list link (pool->comp_mu) */
    /* Runs on the loop thread, no lanes lock held; may free the node. */
    void (*run)(struct ln__completion *c);
} ln__completion;

int ln__completions_init(ln_pool *pool);
void ln__completions_fini(ln_pool *pool);
/* Queue c (c->run set) for the loop thread. */
void ln__completion_post(ln_pool *pool, ln__completion *c);

#endif
