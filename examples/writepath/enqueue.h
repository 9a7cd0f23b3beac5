/* enqueue.h - add jobs from many request threads through one ln_jobs handle
 * with group commit: threads that arrive while a commit is running are
 * added together by the next one, in one ln_jobs_add_bulk() transaction.
 *
 * Each caller still returns only once its own job is durable (or failed),
 * so answering after wp_enqueue() keeps the queue's guarantee. A lone
 * request commits at once, alone; batches form only under load, where they
 * turn hundreds of store transactions per second (each a chance to meet the
 * worker's transactions on the store's single write lock) into a few.
 *
 * Thread rules: wp_enqueue() from any number of threads at once; create
 * and destroy from one thread while no wp_enqueue() runs.
 */
#ifndef WP_ENQUEUE_H
#define WP_ENQUEUE_H

#include <lanes/jobs.h>

typedef struct wp_enqueuer wp_enqueuer;

/* jobs must outlive the enqueuer; queue is copied. max_batch >= 1 is the
 * most jobs one transaction adds. 0, or -1 (no memory). */
int wp_enqueuer_create(wp_enqueuer **out, ln_jobs *jobs, const char *queue, unsigned max_batch);
void wp_enqueuer_destroy(wp_enqueuer *e); /* NULL is a no-op */

/* Add one job (spec and everything it points to must stay valid until the
 * call returns) and wait until it is stored. Returns 0 or the LN_E* code of
 * ln_jobs_add_bulk for the batch it was part of; *batch (may be NULL) gets
 * that batch's size. */
int wp_enqueue(wp_enqueuer *e, const ln_job_spec *spec, unsigned *batch);

#endif
