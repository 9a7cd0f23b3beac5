/* barrier.c - the asymmetric barrier of barrier.h. */
#include "barrier.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#if defined(__linux__)
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

int ln__barrier_asymmetric;
_Atomic unsigned ln__barrier_word;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void init_once(void) {
#if defined(__linux__) && defined(SYS_membarrier) && !defined(LN_BARRIER_TSAN)
    const char *off = getenv("LANES_NO_MEMBARRIER");
    if (off != NULL && strcmp(off, "1") == 0) return;
    long cmds = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
    if (cmds < 0 || !(cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED)) return;
    /* A process must register once before it may use the command. */
    if (syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) != 0) return;
    ln__barrier_asymmetric = 1;
#endif
}

void ln__barrier_init(void) {
    pthread_once(&once, init_once);
}

void ln__barrier_heavy(void) {
#if defined(LN_BARRIER_TSAN)
    atomic_fetch_add_explicit(&ln__barrier_word, 0, memory_order_seq_cst);
#else
#if defined(__linux__) && defined(SYS_membarrier)
    if (ln__barrier_asymmetric) {
        /* Documented not to fail once registered (the command was queried
         * and registered in init_once). The registration belongs to the
         * address space: a forked child inherits it, and exec, which
         * resets it, also resets this library's state. */
        (void)syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
        return;
    }
#endif
    atomic_thread_fence(memory_order_seq_cst);
#endif
}
