/* jobs_edit.c - `lanes jobs URL change-priority QUEUE ID PRIORITY [--lifo]`,
 * `change-delay QUEUE ID DELAY_MS`, `update-data QUEUE ID JSON|-`,
 * `dedup QUEUE DEDUP_ID [--remove]`, `promote QUEUE ID|--all` and
 * `priority-counts QUEUE PRIORITY...`, `trim-events QUEUE MAXLEN`,
 * `add-log QUEUE ID LINE|- [--keep N]`, `clear-logs QUEUE ID [--keep N]`,
 * `detach QUEUE ID`:
 * <lanes/jobs_edit.h>, ln_jobs_promote and ln_jobs_trim_events from the
 * shell (BullMQ's job.changePriority,
 * job.changeDelay, job.updateData, queue.getDeduplicationJobId,
 * queue.removeDeduplicationKey, job.promote, queue.promoteJobs,
 * queue.getCountsPerPriority, queue.trimEvents, queue.addJobLog,
 * job.clearLogs and job.removeChildDependency). */
#include "jobs_edit.h"

#include "cli.h"
#include "cli_err.h"
#include "cli_num.h"
#include "cli_opts.h"
#include "jobs_store.h"
#include "store_url.h"

#include <lanes.h>
#include <lanes/jobs.h>

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char cli_jobs_change_priority_help[] =
    "Give a job a new priority, 0..2097151 (0: none; lower runs first), as\n"
    "BullMQ's job.changePriority. A waiting or prioritized job (also in a\n"
    "paused queue) moves to the back of its new priority's jobs, or with\n"
    "--lifo to their front; a delayed job (or a flow parent waiting for its\n"
    "children) stays so with the new priority, for when it is ready; so does\n"
    "an active or finished job (for a retry). Prints nothing\n"
    "({\"ok\":true,\"id\":ID} with --json). No such job: exit 4.\n"
    "\n"
    "  --lifo    to the front of its new priority's jobs\n";

const char cli_jobs_change_delay_help[] =
    "Make a delayed job due DELAY_MS milliseconds from now (BullMQ's\n"
    "job.changeDelay; 0: due now, it runs at the next worker step). Prints\n"
    "nothing ({\"ok\":true,\"id\":ID} with --json). A job not delayed: exit\n"
    "2, nothing changes. No such job: exit 4.\n";

const char cli_jobs_update_data_help[] =
    "Replace a job's data with JSON (any JSON text, stored byte for byte, in\n"
    "any state: BullMQ's job.updateData). '-' reads it from stdin, where one\n"
    "trailing newline (\\n or \\r\\n) is dropped, as `add` does. Prints\n"
    "nothing ({\"ok\":true,\"id\":ID} with --json). Not JSON, or too large:\n"
    "exit 2. No such job: exit 4.\n";

const char cli_jobs_dedup_help[] =
    "Print the id of the job holding deduplication id DEDUP_ID (`add\n"
    "--dedup`; BullMQ's queue.getDeduplicationJobId), {\"dedup\":D,\"id\":ID}\n"
    "with --json; none holds it: exit 4.\n"
    "\n"
    "  --remove    release DEDUP_ID whatever holds it, so the next add with\n"
    "              it makes a new job (BullMQ's queue.removeDeduplicationKey);\n"
    "              prints 1 if it was held, else 0 ({\"removed\":B} with --json)\n";

const char cli_jobs_promote_help[] =
    "Make a delayed job runnable now (BullMQ's job.promote): to waiting, or\n"
    "prioritized when it has a priority. --all promotes every delayed job of\n"
    "the queue, the earliest due first, in steps of 1000 (BullMQ's\n"
    "queue.promoteJobs) and prints how many ({\"count\":N} with --json). A\n"
    "job not delayed: exit 2; no such job: exit 4.\n"
    "\n"
    "  --all    every delayed job of the queue\n";

const char cli_jobs_priority_counts_help[] =
    "Print the number of ready jobs of each PRIORITY (up to 32 of them), one\n"
    "`PRIORITY COUNT` a line ({\"PRIORITY\":COUNT,...} with --json; BullMQ's\n"
    "queue.getCountsPerPriority): 0 counts the waiting jobs, > 0 the\n"
    "prioritized jobs of that priority.\n";

const char cli_jobs_trim_events_help[] =
    "Trim the queue's events to about the newest MAXLEN (BullMQ's\n"
    "queue.trimEvents): at least those stay; Redis drops whole stream nodes\n"
    "only (XTRIM MAXLEN ~), so a short stream may keep more; sqlite keeps\n"
    "exactly MAXLEN (and the store's newest event). Prints how many went\n"
    "({\"removed\":N} with --json).\n";

const char cli_jobs_add_log_help[] =
    "Append LINE to a job's log, whatever its state (BullMQ's\n"
    "queue.addJobLog); '-' reads it from stdin, where one trailing newline\n"
    "(\\n or \\r\\n) is dropped. At most 65536 bytes. Prints how many lines\n"
    "the job has after ({\"count\":N} with --json). No such job: exit 4.\n"
    "\n"
    "  --keep N    then keep only the job's newest N lines (BullMQ's keepLogs;\n"
    "              0, the default, keeps every line)\n";

const char cli_jobs_clear_logs_help[] =
    "Remove a job's log lines (BullMQ's job.clearLogs). Prints nothing\n"
    "({\"ok\":true,\"id\":ID} with --json). No such job: exit 4.\n"
    "\n"
    "  --keep N    keep the newest N lines (0, the default, keeps none)\n";

const char cli_jobs_detach_help[] =
    "Make a flow child no longer a dependency of its parent (BullMQ's\n"
    "job.removeChildDependency): while the parent still waits for it, it\n"
    "leaves the parent's pending children, and a parent left with none is\n"
    "released (ready, or delayed by its own delay). The child itself stays\n"
    "as it is; its result reaches no parent. Prints 1, or 0 when the job\n"
    "was no pending dependency ({\"removed\":B} with --json). No such job,\n"
    "or its parent is gone: exit 4.\n";

#define POS_MAX 33 /* priority-counts: QUEUE and up to 32 priorities */

/* The command line after the subcommand. */
typedef struct eargs {
    const char *pos[POS_MAX];
    const char *keep;
    int npos, lifo, remove, all, json, create;
} eargs;

static char prog[64] = "lanes jobs";

#define AT(member) offsetof(eargs, member)

static const cli_opt options[] = {
    CLI_OPTS_EVERY(eargs),
    {"--lifo", 0, AT(lifo), "change-priority"},
    {"--remove", 0, AT(remove), "dedup"},
    {"--all", 0, AT(all), "promote"},
    {"--keep", 1, AT(keep), "add-log clear-logs"},
    CLI_OPTS_END,
};

int cli_jobs_edit_is(const char *name) {
    return strcmp(name, "change-priority") == 0 || strcmp(name, "change-delay") == 0 ||
           strcmp(name, "update-data") == 0 || strcmp(name, "dedup") == 0 ||
           strcmp(name, "promote") == 0 || strcmp(name, "priority-counts") == 0 ||
           strcmp(name, "trim-events") == 0 || strcmp(name, "add-log") == 0 ||
           strcmp(name, "clear-logs") == 0 || strcmp(name, "detach") == 0;
}

/* All of stdin (malloc'd, NUL-terminated) without one trailing newline, or
 * NULL after a usage message (unreadable, over 1 GiB, or a NUL byte). */
static char *read_data(void) {
    size_t len = 0, cap = 1 << 16;
    char *p = malloc(cap);
    size_t n;
    while (p != NULL && (n = fread(p + len, 1, cap - len - 1, stdin)) > 0) {
        len += n;
        if (len + 1 < cap) continue;
        char *q = cap < (1u << 30) ? realloc(p, cap * 2) : NULL;
        if (q == NULL) free(p);
        cap *= 2;
        p = q;
    }
    if (p == NULL || ferror(stdin) || memchr(p, '\0', len) != NULL) {
        free(p);
        cli_usage(prog, "%s", "cannot read stdin (unreadable, too large or a NUL byte)");
        return NULL;
    }
    if (len > 0 && p[len - 1] == '\n') len--;
    if (len > 0 && p[len - 1] == '\r') len--;
    p[len] = '\0';
    return p;
}

static int done(ln_jobs *jobs, int err, const char *id, int json) {
    if (err != 0) return cli_jobs_fail(jobs, prog, err);
    if (json) cli_jobs_print_json(json_pack("{s:b,s:s}", "ok", 1, "id", id));
    return CLI_EXIT_OK;
}

/* The end of a call that reports a count (as {"key":N} with --json) or a
 * yes/no (1/0, {"key":B}): its exit code. */
static int reported(ln_jobs *jobs, int err, const char *key, size_t n, int is_flag, int json) {
    if (err != 0) return cli_jobs_fail(jobs, prog, err);
    if (json)
        cli_jobs_print_json(is_flag ? json_pack("{s:b}", key, n != 0)
                                    : json_pack("{s:I}", key, (json_int_t)n));
    else
        printf("%zu\n", n);
    return CLI_EXIT_OK;
}

static int run_dedup(ln_jobs *jobs, const eargs *a) {
    const char *q = a->pos[0], *d = a->pos[1];
    if (a->remove) {
        int removed = 0;
        int err = ln_jobs_dedup_remove(jobs, q, d, &removed);
        return reported(jobs, err, "removed", (size_t)removed, 1, a->json);
    }
    char id[LN_JOB_ID_MAX * 8];
    int err = ln_jobs_dedup_job(jobs, q, d, id, sizeof id);
    if (err != 0) return cli_jobs_fail(jobs, prog, err);
    if (a->json)
        cli_jobs_print_json(json_pack("{s:s,s:s}", "dedup", d, "id", id));
    else
        puts(id);
    return CLI_EXIT_OK;
}

static int run_promote(ln_jobs *jobs, const eargs *a) {
    if (!a->all) return done(jobs, ln_jobs_promote(jobs, a->pos[0], a->pos[1]), a->pos[1], a->json);
    size_t n = 0;
    int err = ln_jobs_promote_all(jobs, a->pos[0], &n);
    return reported(jobs, err, "count", n, 0, a->json);
}

static int run_priority_counts(ln_jobs *jobs, const eargs *a) {
    int prio[POS_MAX];
    uint64_t counts[POS_MAX];
    int n = a->npos - 1;
    for (int i = 0; i < n; i++) {
        long long v;
        if (cli_parse_ll(a->pos[i + 1], 0, LN_JOB_PRIORITY_MAX, &v) != 0)
            return cli_usage(prog, "PRIORITY must be 0..%d, not '%s'", LN_JOB_PRIORITY_MAX,
                             a->pos[i + 1]);
        prio[i] = (int)v;
    }
    int err = ln_jobs_counts_per_priority(jobs, a->pos[0], prio, (size_t)n, counts);
    if (err != 0) return cli_jobs_fail(jobs, prog, err);
    json_t *o = a->json ? json_object() : NULL;
    for (int i = 0; i < n; i++) {
        char key[16];
        snprintf(key, sizeof key, "%d", prio[i]);
        if (o != NULL)
            json_object_set_new(o, key, json_integer((json_int_t)counts[i]));
        else
            printf("%s %llu\n", key, (unsigned long long)counts[i]);
    }
    if (o != NULL) cli_jobs_print_json(o);
    return CLI_EXIT_OK;
}

static int run_trim(ln_jobs *jobs, const eargs *a) {
    long long v;
    if (cli_parse_ll(a->pos[1], 0, 1LL << 62, &v) != 0)
        return cli_usage(prog, "MAXLEN must be a count >= 0, not '%s'", a->pos[1]);
    size_t removed = 0;
    int err = ln_jobs_trim_events(jobs, a->pos[0], (size_t)v, &removed);
    return reported(jobs, err, "removed", removed, 0, a->json);
}

static int run_logs(ln_jobs *jobs, const char *cmd, const eargs *a) {
    long long keep = 0;
    if (a->keep != NULL && cli_parse_ll(a->keep, 0, 1LL << 62, &keep) != 0)
        return cli_usage(prog, "--keep must be a count >= 0, not '%s'", a->keep);
    const char *q = a->pos[0], *id = a->pos[1];
    if (strcmp(cmd, "clear-logs") == 0)
        return done(jobs, ln_jobs_clear_logs(jobs, q, id, (size_t)keep), id, a->json);
    int from_stdin = strcmp(a->pos[2], "-") == 0;
    char *line = from_stdin ? read_data() : NULL;
    if (from_stdin && line == NULL) return CLI_EXIT_USAGE;
    size_t count = 0;
    int err = ln_jobs_add_log(jobs, q, id, from_stdin ? line : a->pos[2], (size_t)keep, &count);
    free(line);
    return reported(jobs, err, "count", count, 0, a->json);
}

static int run_detach(ln_jobs *jobs, const eargs *a) {
    int removed = 0;
    int err = ln_jobs_remove_child_dependency(jobs, a->pos[0], a->pos[1], &removed);
    return reported(jobs, err, "removed", (size_t)removed, 1, a->json);
}

/* The arguments subcommand cmd needs, for its usage error. */
static const char *synopsis_of(const char *cmd) {
    if (strcmp(cmd, "change-priority") == 0) return CLI_JOBS_CHANGE_PRIORITY_SYNOPSIS;
    if (strcmp(cmd, "change-delay") == 0) return CLI_JOBS_CHANGE_DELAY_SYNOPSIS;
    if (strcmp(cmd, "update-data") == 0) return CLI_JOBS_UPDATE_DATA_SYNOPSIS;
    if (strcmp(cmd, "dedup") == 0) return CLI_JOBS_DEDUP_SYNOPSIS;
    if (strcmp(cmd, "promote") == 0) return CLI_JOBS_PROMOTE_SYNOPSIS;
    if (strcmp(cmd, "priority-counts") == 0) return CLI_JOBS_PRIORITY_COUNTS_SYNOPSIS;
    if (strcmp(cmd, "add-log") == 0) return CLI_JOBS_ADD_LOG_SYNOPSIS;
    if (strcmp(cmd, "clear-logs") == 0) return CLI_JOBS_CLEAR_LOGS_SYNOPSIS;
    if (strcmp(cmd, "detach") == 0) return CLI_JOBS_DETACH_SYNOPSIS;
    return CLI_JOBS_TRIM_EVENTS_SYNOPSIS;
}

static int run(ln_jobs *jobs, const char *cmd, const eargs *a) {
    const char *q = a->pos[0], *id = a->pos[1];
    long long v;
    if (strcmp(cmd, "dedup") == 0) return run_dedup(jobs, a);
    if (strcmp(cmd, "promote") == 0) return run_promote(jobs, a);
    if (strcmp(cmd, "priority-counts") == 0) return run_priority_counts(jobs, a);
    if (strcmp(cmd, "trim-events") == 0) return run_trim(jobs, a);
    if (strcmp(cmd, "detach") == 0) return run_detach(jobs, a);
    if (strcmp(cmd, "add-log") == 0 || strcmp(cmd, "clear-logs") == 0)
        return run_logs(jobs, cmd, a);
    if (strcmp(cmd, "change-priority") == 0) {
        if (cli_parse_ll(a->pos[2], 0, LN_JOB_PRIORITY_MAX, &v) != 0)
            return cli_usage(prog, "PRIORITY must be 0..%d, not '%s'", LN_JOB_PRIORITY_MAX,
                             a->pos[2]);
        return done(jobs, ln_jobs_change_priority(jobs, q, id, (int)v, a->lifo), id, a->json);
    }
    if (strcmp(cmd, "change-delay") == 0) {
        if (cli_parse_ll(a->pos[2], 0, 1LL << 52, &v) != 0)
            return cli_usage(prog, "DELAY_MS must be milliseconds >= 0, not '%s'", a->pos[2]);
        return done(jobs, ln_jobs_change_delay(jobs, q, id, v), id, a->json);
    }
    char *data = strcmp(a->pos[2], "-") == 0 ? read_data() : NULL;
    if (data == NULL && strcmp(a->pos[2], "-") == 0) return CLI_EXIT_USAGE;
    int rc =
        done(jobs, ln_jobs_update_data(jobs, q, id, data != NULL ? data : a->pos[2]), id, a->json);
    free(data);
    return rc;
}

int cli_jobs_edit_main(int argc, char **argv) {
    const char *cmd = argv[2];
    snprintf(prog, sizeof prog, "lanes jobs %s", cmd);
    int want = strcmp(cmd, "dedup") == 0 || strcmp(cmd, "trim-events") == 0 ||
                       strcmp(cmd, "clear-logs") == 0 || strcmp(cmd, "detach") == 0
                   ? 2
                   : 3;
    eargs a = {0};
    cli_cmdline cl = {options, cmd, prog, POS_MAX};
    int rc = cli_opts_parse(&cl, argc - 3, argv + 3, &a, a.pos, &a.npos);
    if (rc != 0) return rc;
    if (strcmp(cmd, "promote") == 0) {
        want = a.all ? 1 : 2;
    } else if (strcmp(cmd, "priority-counts") == 0) {
        want = a.npos < 2 ? 2 : a.npos;
    }
    if (a.npos != want) return cli_usage(prog, "%s needs %s", cmd, synopsis_of(cmd));
    if (!a.create && (rc = cli_check_store_exists(prog, argv[1],
                                                  "add --create, or add a job, to make one")) != 0)
        return rc;
    ln_jobs *jobs;
    if ((rc = cli_jobs_open(prog, argv[1], &jobs)) != 0) return rc;
    rc = run(jobs, cmd, &a);
    ln_jobs_close(jobs);
    return rc;
}
