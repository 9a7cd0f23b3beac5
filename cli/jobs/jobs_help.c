/* jobs_help.c - the table of `lanes jobs` subcommands: their synopsis and
 * what `--help` prints for each. */
#include "jobs_help.h"
#include "jobs_edit.h"
#include "jobs_metrics.h"
#include "jobs_ratelimit.h"

#include <string.h>

#define RETENTION                                                                                  \
    "      none     remove no job: keep it, also when the worker that finishes it\n"               \
    "               removes jobs (lanes worker --remove-on-complete; BullMQ's\n"                   \
    "               false). Without the option the worker's retention applies\n"                   \
    "               (keep every job unless it says otherwise)\n"                                   \
    "      all      remove every job as soon as it finishes\n"                                     \
    "      keep:N   keep the newest N finished jobs of the queue, remove older ones\n"             \
    "               (a bare N means the same, as in BullMQ)\n"                                     \
    "      age:S    remove finished jobs older than S seconds\n"

static const cli_jobs_cmd cmds[] = {
    {"add", "add a job and print its id", "QUEUE NAME [JSON|-] [options]",
     "Add a job and print its id. JSON is the job's data (default {});\n"
     "'-' reads it from stdin, where one trailing newline (\\n or \\r\\n) is\n"
     "dropped, so `echo '{\"a\":1}' | lanes jobs URL add q n -` stores {\"a\":1}.\n"
     "A sqlite: store that does not exist yet is created.\n"
     "\n"
     "  --delay MS              run no sooner than MS milliseconds from now\n"
     "  --priority N            1..2097151, lower runs first (0: none)\n"
     "  --attempts N            runs in total before the job fails (default 1)\n"
     "  --backoff TYPE:MS[:JITTER]   delay before a retry: TYPE fixed,\n"
     "                          exponential (MS * 2^(n-1) before retry n) or a\n"
     "                          custom type's name (a worker's backoff strategy\n"
     "                          decides; `lanes worker` has none and fails such\n"
     "                          a job for good); JITTER 0..1: each retry waits a\n"
     "                          delay drawn from [(1-JITTER)*D, D]\n"
     "  --id ID                 a custom id; adding an existing id changes nothing\n"
     "  --lifo                  run before older jobs of equal priority\n"
     "  --traceparent TP        W3C trace context carried to the worker\n"
     "  --remove-on-complete WHAT   which completed jobs to remove:\n" RETENTION
     "  --remove-on-fail WHAT       which failed jobs to remove (same values)\n"
     "  --dedup ID[:TTL_MS]     deduplicate: while a job holding ID exists (or,\n"
     "                          with TTL_MS, for that long), an add with ID adds\n"
     "                          nothing and prints the holder's id (BullMQ's\n"
     "                          deduplication; the TTL follows the last ':')\n"
     "  --dedup-extend          each deduplicated add starts the TTL again\n"
     "  --dedup-replace         an add while the holder is still delayed\n"
     "                          replaces it with this job\n"
     "  --dedup-keep-last       an add while the holder runs is kept and added\n"
     "                          when the holder finishes (the latest such add)\n"
     "  --dedup-reschedule      an add while the holder is delayed moves its run\n"
     "                          time to this add's --delay from now\n"
     "  --parent QUEUE:ID       add the job as a child of that existing job: the\n"
     "                          parent waits for it (BullMQ's opts.parent)\n"
     "  --parent-on-failure fail|continue|ignore|remove   what this job's final\n"
     "                          failure does to its parent (default: it stays a\n"
     "                          pending dependency)\n"
     "  --wait-replicas N       Redis: return only once N replicas have the job\n"
     "                          (WAIT; URL wait_replicas=N). Fewer within\n"
     "                          wait_timeout_ms (default 1000): exit 3, LN_EIO,\n"
     "                          the job is on the primary only\n"},
    {"counts", "print the number of jobs in each state", "QUEUE",
     "Print the number of jobs in each state.\n"},
    {"check", "check the store's files for damage", "[--full]",
     "Check the store's structure and print ok; damage found exits with the\n"
     "code of LN_ECORRUPT and says what. SQLite: PRAGMA quick_check over the\n"
     "whole file (a few ms per MiB; an open checks only stores up to 1 MiB,\n"
     "a larger one is checked page by page as calls read it). Redis: ok.\n"
     "\n"
     "  --full        PRAGMA integrity_check: also that every index matches\n"
     "                its table (a few times slower)\n"},
    {"list", "list the jobs in one state, a page at a time",
     "QUEUE STATE [--limit N] [--offset N | --after CURSOR]",
     "List the jobs in one state: waiting delayed prioritized active completed\n"
     "failed paused waiting-children.\n"
     "\n"
     "  --limit N        at most N jobs, 1..10000 (default 100)\n"
     "  --offset N       skip the first N jobs (default 0); the store steps\n"
     "                   over them: on SQLite the cost grows with N\n"
     "  --after CURSOR   the jobs after the row whose cursor this is (the\n"
     "                   notice below gives it): the same cost at any depth,\n"
     "                   and rows that left before it shift nothing\n"
     "\n"
     "When more jobs remain after the page, a line on stderr says so and\n"
     "gives the --after (and --offset) of the next page (a JSON object under\n"
     "--json: {\"more\":true,\"shown\":N,\"next_after\":\"CURSOR\",\n"
     "\"next_offset\":N}); stdout stays the list.\n"},
    {"get", "print one job with all its fields", "QUEUE ID",
     "Print one job with all its fields, and for a job of a flow its parent\n"
     "and children (each child's key, status and result or reason). With\n"
     "--json one object; its backoff is backoff (fixed, exponential or a\n"
     "custom type's name), backoff_ms and backoff_jitter (0: none).\n"},
    {"logs", "print the log lines a handler wrote for a job", "QUEUE ID",
     "Print the log lines a handler wrote for a job.\n"},
    {"retry", "move failed (or completed) jobs back to waiting",
     "(QUEUE ID | QUEUE --all [--before MS]) [--state STATE]",
     "Move a failed job (or, with --all, every failed job) back to waiting\n"
     "with a fresh attempt budget. --state completed retries completed jobs\n"
     "instead (their results are cleared). --before MS: with --all, only the\n"
     "jobs that finished at or before MS (ms since the epoch; default: now).\n"
     "Prints how many moved.\n"},
    {"remove", "delete a job, or its children", "QUEUE ID [--children | --unprocessed-children]",
     "Delete a job. Refused (exit 1) while it is active, and for a job\n"
     "scheduler's current iteration (its take makes the next one: unschedule\n"
     "the scheduler instead). Its flow children stay; prints 1.\n"
     "\n"
     "  --children   delete the job with its whole subtree of children, in\n"
     "               every queue (BullMQ's queue.remove default), all or\n"
     "               nothing; prints how many went. Refused (exit 1) while\n"
     "               any job of the tree is active; exit 2 for a tree of\n"
     "               more than 1000 entries (remove its subtrees first).\n"
     "  --unprocessed-children\n"
     "               keep the job (in any state, even active) and delete its\n"
     "               children not yet processed (pending, not failed), each\n"
     "               with its own such children (BullMQ's\n"
     "               job.removeUnprocessedChildren); a child a worker holds\n"
     "               is kept with its subtree. A parent left without pending\n"
     "               children leaves waiting-children. Prints how many went;\n"
     "               exit 2 past 1000 entries (nothing removed).\n"},
    {"clean", "delete finished jobs in one state", "QUEUE completed|failed [--age S] [--keep N]",
     "Delete finished jobs in one state; prints how many went.\n"
     "\n"
     "  --age S     only jobs that finished more than S seconds ago\n"
     "  --keep N    keep the newest N jobs (default 0)\n"},
    {"pause", "stop workers taking jobs from the queue", "QUEUE",
     "Stop workers taking jobs from the queue.\n"},
    {"rate-limit", "show, set or clear the queue's rate limit",
     "QUEUE [MAX/DURATION_MS | --clear | --for MS]", cli_jobs_rate_limit_help},
    {"concurrency", "show, set or clear the queue's global concurrency", "QUEUE [N | --clear]",
     cli_jobs_concurrency_help},
    {"resume", "let workers take jobs from the queue again", "QUEUE",
     "Let workers take jobs from the queue again.\n"},
    {"drain", "delete the waiting, prioritized and delayed jobs", "QUEUE",
     "Delete the waiting, prioritized and delayed jobs; prints how many went.\n"},
    {"obliterate", "delete the queue and everything of it", "QUEUE [--force]",
     "Delete the queue and everything of it, as BullMQ's queue.obliterate():\n"
     "it is paused first, then every job in every state, its job schedulers,\n"
     "events, metrics, limits and counters go; prints how many jobs went.\n"
     "With active jobs it deletes nothing and exits 1 (the queue stays\n"
     "paused) unless given --force.\n"
     "\n"
     "  --force   delete active jobs too: their workers' outcomes are refused\n"},
    {"wait", "wait until a job finishes and print its result", "QUEUE ID [--timeout S]",
     "Wait until the job completed or failed (as BullMQ's waitUntilFinished)\n"
     "and print its result on stdout (exit 0), or its failure reason on\n"
     "stderr (exit 1). Returns at once for a job already finished.\n"
     "\n"
     "  --timeout S   give up after S seconds (may be fractional): exit 124\n"
     "                (default: no limit)\n"
     "\n"
     "--json prints the job as `get --json` does, for both outcomes.\n"
     "No such job, or removed meanwhile: exit 4.\n"},
    {"events", "print (or follow) the queue's events", "QUEUE [--follow] [--from ID]",
     "Print the queue's events, one a line: ID NAME JOBID FIELDS (FIELDS a\n"
     "JSON object of strings; JOBID '-' when none), or with --json\n"
     "{\"id\",\"event\",\"jobId\",\"at\",\"fields\"}. Redis: BullMQ's events\n"
     "stream (Node's events too). sqlite: the store's events table, whose\n"
     "per-job moves (added, waiting, delayed, active) are written only by\n"
     "handles opened with ?events=all (the default, events=outcomes, writes\n"
     "the outcomes, progress, stalls and administration).\n"
     "\n"
     "  --follow    keep printing new events until interrupted (SIGINT/SIGTERM)\n"
     "  --from ID   start after event ID; \"0\" from the oldest kept, \"$\" only\n"
     "              new ones (default: \"0\", or \"$\" with --follow)\n"},
    {"workers", "print the workers connected to the queue", "QUEUE",
     "Print the workers connected to the queue now, oldest first, one a line:\n"
     "ID KIND NAME WHERE pid=PID up=Ns seen=Ns-ago, or with --json an array of\n"
     "{\"id\",\"kind\",\"name\",\"addr\",\"host\",\"pid\",\"startedOn\",\"seenOn\"}.\n"
     "KIND is lanes (a `lanes worker` or ln_worker_run) or bullmq (a BullMQ\n"
     "worker, e.g. Node's). Redis: the connections named as BullMQ names a\n"
     "worker's (CLIENT LIST, as Queue.getWorkers()); WHERE is the address.\n"
     "sqlite: the runs that sent a heartbeat within the last 6 s; WHERE is\n"
     "the host.\n"},
    {"metrics", "print the queue's completed/failed counts per minute", CLI_JOBS_METRICS_SYNOPSIS,
     CLI_JOBS_METRICS_HELP},
    {"cancel", "cancel a job that has not finished", "QUEUE ID",
     "Cancel a job that has not finished: it ends failed with the reason\n"
     "\"canceled\" at once, without a retry. A waiting, prioritized or\n"
     "delayed job never runs. An active one: the lanes worker running it sees\n"
     "the cancel within a second (its handler's ln_job_canceled() turns 1;\n"
     "`lanes worker --exec` sends the program's process group SIGTERM, then\n"
     "SIGKILL after its --grace, 2 s without one) and whatever the run\n"
     "reports later is refused. A Node (BullMQ) worker cannot see it: its\n"
     "processor runs on, and its outcome is refused. Prints nothing\n"
     "({\"ok\":true,\"id\":ID} with --json). A finished job, a flow parent\n"
     "waiting for its children or a job scheduler's iteration that has not\n"
     "run: exit 2, nothing changes. No such job: exit 4.\n"},
    {"change-priority", "give a job a new priority", CLI_JOBS_CHANGE_PRIORITY_SYNOPSIS,
     cli_jobs_change_priority_help},
    {"change-delay", "make a delayed job due after a new delay", CLI_JOBS_CHANGE_DELAY_SYNOPSIS,
     cli_jobs_change_delay_help},
    {"update-data", "replace a job's data", CLI_JOBS_UPDATE_DATA_SYNOPSIS,
     cli_jobs_update_data_help},
    {"dedup", "print the job holding a deduplication id, or release it", CLI_JOBS_DEDUP_SYNOPSIS,
     cli_jobs_dedup_help},
    {"promote", "make a delayed job (or every one) runnable now", CLI_JOBS_PROMOTE_SYNOPSIS,
     cli_jobs_promote_help},
    {"priority-counts", "count the ready jobs of each given priority",
     CLI_JOBS_PRIORITY_COUNTS_SYNOPSIS, cli_jobs_priority_counts_help},
    {"trim-events", "keep only the newest events of the queue", CLI_JOBS_TRIM_EVENTS_SYNOPSIS,
     cli_jobs_trim_events_help},
    {"add-log", "add a log line to a job", CLI_JOBS_ADD_LOG_SYNOPSIS, cli_jobs_add_log_help},
    {"clear-logs", "delete a job's log lines", CLI_JOBS_CLEAR_LOGS_SYNOPSIS,
     cli_jobs_clear_logs_help},
    {"detach", "make a flow child no longer a dependency of its parent", CLI_JOBS_DETACH_SYNOPSIS,
     cli_jobs_detach_help},
    {"flow", "add a tree of jobs from a JSON file, all or nothing", "FILE.json|-",
     "Add a flow: a tree of jobs, all or nothing (BullMQ's FlowProducer). A\n"
     "parent waits in waiting-children until its children are done, then\n"
     "runs and reads their results. FILE ('-': stdin) holds one node:\n"
     "  {\"name\": N, \"queueName\": Q, \"data\": JSON, \"opts\": {...},\n"
     "   \"children\": [node, ...]}\n"
     "queueName is required on the root; a child without it is in its\n"
     "parent's queue. opts: jobId, delay, priority, attempts, backoff\n"
     "({\"type\":\"fixed\"|\"exponential\"|a custom type,\"delay\":MS,\n"
     "\"jitter\":0..1} or MS), lifo,\n"
     "removeOnComplete / removeOnFail (true, false, N, {\"count\":N},\n"
     "{\"age\":S}), and on a child what its final failure does to its\n"
     "parent: failParentOnFailure, continueParentOnFailure,\n"
     "ignoreDependencyOnFailure, removeDependencyOnFailure (jobs.h,\n"
     "\"Flows\"). data is written back by jansson: use the C API for data\n"
     "whose numbers exceed a double or a 64-bit integer.\n"
     "Prints \"QUEUE ID\" per node, root first, then each child's subtree\n"
     "(--json: [{\"queue\",\"id\",\"name\"}]). A sqlite: store that does not\n"
     "exist yet is created.\n"
     "\n"
     "  --wait-replicas N   Redis: as for add, the whole flow on N replicas\n"},
};

const cli_jobs_cmd *cli_jobs_cmd_find(const char *name) {
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
        if (strcmp(cmds[i].name, name) == 0) return &cmds[i];
    return NULL;
}

static const char common_text[] =
    "URL: sqlite:PATH[?sync=normal|full&busy_timeout=MS&reserve=BYTES&\n"
    "                 events=none|outcomes|all],\n"
    "     e.g. sqlite:lanes.db, or redis://HOST:PORT/DB when built with\n"
    "     hiredis. Only `add`, `flow` and `schedule` create a sqlite: store;\n"
    "     every other command refuses a PATH with no store unless given\n"
    "     --create.\n"
    "\n"
    "options of every command:\n"
    "  --json      print JSON (an object, or an array for list and logs);\n"
    "              errors become {\"error\":{\"code\":...,\"message\":...}} on stderr\n"
    "  --create    create a sqlite: store that does not exist yet\n"
    "  --max-data-size BYTES  most bytes of a job's data (add, flow,\n"
    "              schedule, update-data) and of a result or progress value\n"
    "              (default 16777216, 16 MiB; at most 1073741824)\n"
    "  -h, --help  describe the command\n"
    "\n"
    "exit codes: 0 done; 1 the operation failed (e.g. job active);\n"
    "  2 bad command line or bad input (invalid JSON, negative delay, an option\n"
    "    the command does not take, no store at a sqlite: PATH, ...);\n"
    "  3 the store could not be opened or used; 4 no such job (or scheduler);\n"
    "  124 wait: the job did not finish within --timeout.\n";

/* The job scheduler commands (jobs_schedule.c) have their own help. */
static const struct {
    const char *name, *summary;
} sched_cmds[] = {
    {"schedule", "create or update a job scheduler (--every MS or --cron)"},
    {"unschedule", "remove a job scheduler"},
    {"schedules", "list the queue's job schedulers"},
};

#define NCMDS (sizeof cmds / sizeof cmds[0])
#define NSCHED (sizeof sched_cmds / sizeof sched_cmds[0])

const char *cli_jobs_cmd_name(size_t i, const char **summary) {
    const char *name = NULL, *sum = NULL;
    if (i < NCMDS) {
        name = cmds[i].name;
        sum = cmds[i].summary;
    } else if (i - NCMDS < NSCHED) {
        name = sched_cmds[i - NCMDS].name;
        sum = sched_cmds[i - NCMDS].summary;
    }
    if (summary != NULL) *summary = sum;
    return name;
}

void cli_jobs_usage(FILE *f) {
    fputs("usage: lanes jobs URL COMMAND [ARGS] [--json]\n\ncommands:\n", f);
    const char *name, *summary;
    for (size_t i = 0; (name = cli_jobs_cmd_name(i, &summary)) != NULL; i++)
        fprintf(f, "  %-16s %s\n", name, summary);
    fputs("\n'lanes jobs URL COMMAND --help' (or 'lanes jobs COMMAND --help')\n"
          "gives a command's arguments and options.\n\n",
          f);
    fputs(common_text, f);
}

void cli_jobs_cmd_usage(FILE *f, const cli_jobs_cmd *cmd) {
    fprintf(f, "usage: lanes jobs URL %s %s [--json]\n\n%s\n", cmd->name, cmd->synopsis, cmd->help);
    fputs(common_text, f);
}
