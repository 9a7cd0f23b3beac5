/* store.h - the calls the worker (worker*.c) makes into a store, through
 * the front. Not API.
 *
 * The worker never reaches into a backend's method tables: every call
 * below is a front function that locks the handle where the backend
 * interface says so, checks for fork, calls the backend and copies the
 * backend's error detail to the handle (ln_jobs_errmsg). The types
 * (ln__jobs_step, ln__job_ref, ln__job_taken, ln__jobs_wait,
 * ln__jobs_pipe) are the backend interface's (backend.h).
 */
#ifndef LN_JOBS_STORE_H
#define LN_JOBS_STORE_H

#include "backend.h"

/* ---- Store operations: each one runs with the handle's mutex held. ---- */
int ln__store_step(ln_jobs *jobs, const char *queue, ln__jobs_step *st);
int ln__store_recover_stalled(ln_jobs *jobs, const char *queue, unsigned max_stalled,
                              const char *reason, size_t *requeued, size_t *failed);
int ln__store_release(ln_jobs *jobs, const char *queue, const ln__job_ref *refs, int *rc, size_t n);
int ln__store_progress(ln_jobs *jobs, const char *queue, const ln__job_ref *ref, const char *json);
int ln__store_log(ln_jobs *jobs, const char *queue, const ln__job_ref *ref, const char *line);
int ln__store_pending(ln_jobs *jobs, const char *queue, int *pending);
/* The run's heartbeat (backend.h worker_beat); LN_ENOTSUP for a store
 * without one (nothing done). */
int ln__store_worker_beat(ln_jobs *jobs, const char *queue, int64_t *id, int leaving);
/* Cancels of held jobs (backend.h cancel_poll; cancel.c). */
int ln__store_cancel_poll(ln_jobs *jobs, const char *queue, int64_t *mark, const ln__job_ref *refs,
                          int *gone, size_t n);

/* ---- Blocking wait for new work (backend.h's wait methods). ----
 * ln__store_wait_open returns LN_ENOTSUP when the store has no blocking
 * wait: the worker then polls. The ln__wait_* calls run WITHOUT the
 * handle's mutex, by the worker's dispatcher only. */
int ln__store_wait_open(ln_jobs *jobs, const char *queue, ln__jobs_wait **out);
int ln__wait_arm(ln__jobs_wait *w, int64_t timeout_ms, int *fd, int64_t *limit_ms);
int ln__wait_read(ln__jobs_wait *w, int64_t *due_in_ms);
void ln__wait_cancel(ln__jobs_wait *w);
void ln__wait_close(ln__jobs_wait *w); /* NULL: no-op */

/* ---- Pipelined steps (backend.h's pipe methods). ----
 * ln__store_pipe_open always gives a pipe: the backend's own, or, for a
 * store without pipe methods, the front's synchronous pipe of depth 1
 * (send runs the step under the handle's mutex and keeps its result; recv
 * hands it back; poll always says the reply is in). So the worker has one
 * path. The ln__pipe_* calls run WITHOUT the handle's mutex, by the
 * worker's dispatcher only. */
int ln__store_pipe_open(ln_jobs *jobs, const char *queue, ln__jobs_pipe **out);
unsigned ln__pipe_depth(const ln__jobs_pipe *p); /* 1..LN__PIPE_DEPTH */
int ln__pipe_send(ln__jobs_pipe *p, ln__jobs_step *st);
int ln__pipe_recv(ln__jobs_pipe *p, ln__jobs_step *st);
int ln__pipe_poll(ln__jobs_pipe *p, int *fd);
const char *ln__pipe_errmsg(const ln__jobs_pipe *p); /* last failure */
void ln__pipe_close(ln__jobs_pipe *p);               /* NULL: no-op */

/* ---- Job records. ---- Free the strings of a taken job and zero them
 * (the one destructor for what a step's take hands out). */
void ln__job_taken_free(ln__job_taken *t);

/* The worker's hook, after a step took n jobs and before they start: for
 * each iteration id among them, the store's sched_taken (with the handle's
 * mutex; a no-op for a store that advances inside its take). */
void ln__store_sched_taken(ln_jobs *jobs, const char *queue, const ln__job_taken *taken, size_t n);

#endif /* LN_JOBS_STORE_H */
