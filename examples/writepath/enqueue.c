/* enqueue.c - group commit of job adds (see enqueue.h).
 *
 * DESIGN (flat combining): a caller appends a slot (on its own stack) to a
 * FIFO list and, if no commit is running, becomes the committer: it takes
 * up to max_batch slots from the head -- its own among them unless more
 * than max_batch are ahead of it -- releases the mutex, adds them all with
 * one ln_jobs_add_bulk(), retakes the mutex, marks those slots done with
 * the result, clears 'committing' and wakes every waiter. A waiter whose
 * slot is not done yet either becomes the next committer or waits again.
 * No extra thread exists; with no contention a call is one ln_jobs_add_bulk
 * of one job.
 *
 * Invariants (under mu): a slot is in the list from its append until a
 * committer takes it; a taken slot is touched only by that committer until
 * it sets done, after which only its owner touches it (the owner leaves
 * only after seeing done under mu, so the committer reads 'next' before
 * setting done, still under mu). 'committing' is 1 exactly while a
 * committer works outside the mutex; only that committer uses specs[].
 */
#include "enqueue.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct slot {
    struct slot *next;
    const ln_job_spec *spec;
    int done;
    int rc;
    unsigned batch;
} slot;

struct wp_enqueuer {
    pthread_mutex_t mu;
    pthread_cond_t cv; /* a commit finished */
    slot *head, *tail;
    int committing;
    ln_jobs *jobs;
    char *queue;
    unsigned max_batch;
    ln_job_spec *specs; /* max_batch entries, the committer's scratch */
};

int wp_enqueuer_create(wp_enqueuer **out, ln_jobs *jobs, const char *queue, unsigned max_batch) {
    if (max_batch == 0) return -1;
    wp_enqueuer *e = calloc(1, sizeof *e);
    if (!e) return -1;
    e->queue = strdup(queue);
    e->specs = calloc(max_batch, sizeof *e->specs);
    if (!e->queue || !e->specs) {
        free(e->queue);
        free(e->specs);
        free(e);
        return -1;
    }
    pthread_mutex_init(&e->mu, NULL);
    pthread_cond_init(&e->cv, NULL);
    e->jobs = jobs;
    e->max_batch = max_batch;
    *out = e;
    return 0;
}

void wp_enqueuer_destroy(wp_enqueuer *e) {
    if (!e) return;
    pthread_cond_destroy(&e->cv);
    pthread_mutex_destroy(&e->mu);
    free(e->queue);
    free(e->specs);
    free(e);
}

/* Called with mu held and committing just set: commit the slots at the
 * head of the list; returns with mu held. */
static void commit_batch(wp_enqueuer *e) {
    slot *first = e->head, *last = NULL;
    unsigned n = 0;
    for (slot *p = first; p && n < e->max_batch; p = p->next) {
        e->specs[n++] = *p->spec;
        last = p;
    }
    e->head = last->next;
    if (!e->head) e->tail = NULL;
    last->next = NULL;

    pthread_mutex_unlock(&e->mu);
    int rc = ln_jobs_add_bulk(e->jobs, e->queue, e->specs, n, NULL, 0);
    pthread_mutex_lock(&e->mu);

    for (slot *p = first, *next; p; p = next) {
        next = p->next; /* before done: the owner may leave once it sees done */
        p->rc = rc;
        p->batch = n;
        p->done = 1;
    }
    e->committing = 0;
    pthread_cond_broadcast(&e->cv);
}

int wp_enqueue(wp_enqueuer *e, const ln_job_spec *spec, unsigned *batch) {
    slot s = {.next = NULL, .spec = spec};
    pthread_mutex_lock(&e->mu);
    if (e->tail)
        e->tail->next = &s;
    else
        e->head = &s;
    e->tail = &s;
    while (!s.done) {
        if (!e->committing) {
            e->committing = 1;
            commit_batch(e);
        } else {
            pthread_cond_wait(&e->cv, &e->mu);
        }
    }
    pthread_mutex_unlock(&e->mu);
    if (batch) *batch = s.batch;
    return s.rc;
}
