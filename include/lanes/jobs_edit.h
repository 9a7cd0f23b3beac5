/* lanes/jobs_edit.h - part of <lanes/jobs.h>: changing a job that waits
 * (its priority, its delay, its data), reading or releasing a
 * deduplication id, promoting every delayed job and counting ready jobs by
 * priority. BullMQ's job.changePriority, job.changeDelay, job.updateData,
 * queue.getDeduplicationJobId, queue.removeDeduplicationKey,
 * queue.promoteJobs, queue.getCountsPerPriority, queue.trimEvents,
 * queue.addJobLog and job.clearLogs. Include <lanes/jobs.h>, which includes this
 * header; its conventions (errors, threads, names, who owns what) hold here
 * too. Every call is one transaction (SQLite) or one script (Redis). */
#ifndef LANES_JOBS_EDIT_H
#define LANES_JOBS_EDIT_H

#include <lanes/jobs.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Give job id of queue priority (0..LN_JOB_PRIORITY_MAX, 0 = none) and
 * move it to its new place (BullMQ's job.changePriority({priority, lifo})):
 *  - waiting or prioritized (also while the queue is paused): it leaves
 *    its line and joins the one of its new priority, at the back, or at
 *    the front with lifo = 1 (first of that priority / first in waiting).
 *    Priority 0 makes it waiting, > 0 prioritized. On SQLite, "the back"
 *    is by the order jobs were added among the jobs of that priority (as
 *    ln_jobs_promote places a job there), on Redis behind every job now
 *    there (BullMQ's wait list and prioritized ZSET with its counter pc);
 *  - delayed: it stays delayed, due when it was; the new priority applies
 *    when it becomes ready; so for a flow parent waiting for its children
 *    (it runs by the new priority once they are done, as BullMQ's);
 *  - active, completed, failed: it takes the priority and moves nothing
 *    (as BullMQ's); a retry makes it ready by the new one.
 * lifo places the job only: its own lifo option (ln_job_info.lifo, what a
 * retry reads) stays as it was added, as BullMQ leaves opts. LN_EINVAL for
 * a priority out of range or lifo not 0/1; LN_ENOENT: no such job. The
 * job's priority (ln_job_info.priority) is the new one. */
LN_EXTERN int ln_jobs_change_priority(ln_jobs *jobs, const char *queue, const char *id,
                                      int priority, int lifo);

/* Make delayed job id of queue due delay_ms (0..100 years) from now, the
 * store's clock (BullMQ's job.changeDelay): its run_at_ms is the new due
 * time while it is delayed (later, as for every job, created_ms + the
 * delay it was added with), a "delayed" event carries the due time, and
 * idle workers learn the new earliest due time (Redis: the marker). A due
 * time of now makes it run at the next worker step, as a due delayed job.
 * LN_ENOENT: no such job; LN_EINVAL: delay_ms out of range, or the job is
 * not delayed (nothing changes). */
LN_EXTERN int ln_jobs_change_delay(ln_jobs *jobs, const char *queue, const char *id,
                                   int64_t delay_ms);

/* Replace job id's data with data_json (BullMQ's job.updateData): any JSON
 * text (the rules of ln_jobs_add: every text JSON.parse accepts, at most
 * the handle's max_data_size bytes), stored byte for byte, in any state
 * the job is in (a running handler keeps the data it was given).
 * LN_EINVAL: data_json NULL or not JSON, or too large; LN_ENOENT: no such
 * job. */
LN_EXTERN int ln_jobs_update_data(ln_jobs *jobs, const char *queue, const char *id,
                                  const char *data_json);

/* The id of the job that holds deduplication id dedup_id of queue
 * (ln_job_opts.dedup_id; BullMQ's queue.getDeduplicationJobId), into
 * job_id (job_id_size bytes; LN_JOB_ID_MAX always fits a job id): 0 and
 * the id, or LN_ENOENT when no job holds it now (never held, released when
 * its job finished or was removed, or its ttl passed). LN_EINVAL: a NULL
 * or empty dedup_id, job_id NULL; LN_ERANGE: the id does not fit. */
LN_EXTERN int ln_jobs_dedup_job(ln_jobs *jobs, const char *queue, const char *dedup_id,
                                char *job_id, size_t job_id_size);

/* Release deduplication id dedup_id of queue whatever job holds it
 * (BullMQ's queue.removeDeduplicationKey): the next add with it makes a
 * new job. The holder itself is unchanged. *removed (may be NULL): 1 if
 * the id was held, 0 if not (not an error). */
LN_EXTERN int ln_jobs_dedup_remove(ln_jobs *jobs, const char *queue, const char *dedup_id,
                                   int *removed);

/* Make every delayed job of queue runnable now (BullMQ's
 * queue.promoteJobs()), each as ln_jobs_promote does (to waiting, or
 * prioritized when it has a priority, a "waiting" event on Redis), the
 * earliest due first, in steps of at most LN_JOBS_PROMOTE_STEP jobs (one
 * transaction / script each: a step done stays done if a later one fails).
 * Delayed jobs added while it runs may be promoted too. *promoted (may be
 * NULL): how many, also on error. */
#define LN_JOBS_PROMOTE_STEP 1000
LN_EXTERN int ln_jobs_promote_all(ln_jobs *jobs, const char *queue, size_t *promoted);

/* Most priorities one ln_jobs_counts_per_priority call takes. */
#define LN_JOBS_PRIORITY_COUNTS_MAX 1000

/* The number of ready jobs of each of priorities[0..n) (BullMQ's
 * queue.getCountsPerPriority) into counts[0..n): priority 0 counts the
 * waiting jobs (paused ones too), > 0 the prioritized jobs of that
 * priority. On Redis a job lanes added with lifo and a priority counts one
 * priority lower, as BullMQ's own call counts it (docs/redis.md,
 * "Differences"). LN_EINVAL: a priority out of 0..LN_JOB_PRIORITY_MAX, n
 * 0 or over LN_JOBS_PRIORITY_COUNTS_MAX, NULL arrays. */
LN_EXTERN int ln_jobs_counts_per_priority(ln_jobs *jobs, const char *queue, const int *priorities,
                                          size_t n, uint64_t *counts);

/* Append line (a NUL-terminated string of at most 65,536 bytes, as
 * ln_job_log takes) to job id's log, whatever state the job is in and
 * whoever runs it (BullMQ's queue.addJobLog(jobId, logRow, keepLogs)).
 * keep > 0 then leaves only its newest keep lines; 0 keeps every line.
 * *count (may be NULL): the number of lines the job has after. LN_ENOENT:
 * no such job; LN_EINVAL: line NULL or too long. */
LN_EXTERN int ln_jobs_add_log(ln_jobs *jobs, const char *queue, const char *id, const char *line,
                              size_t keep, size_t *count);

/* Drop job id's log lines but its newest keep (0: every line goes;
 * BullMQ's job.clearLogs(keepLogs)). Work: the lines dropped. LN_ENOENT:
 * no such job (BullMQ's call says nothing then). */
LN_EXTERN int ln_jobs_clear_logs(ln_jobs *jobs, const char *queue, const char *id, size_t keep);

#ifdef __cplusplus
}
#endif

#endif /* LANES_JOBS_EDIT_H */
