/* jobs_store.h - what every `lanes jobs` subcommand does around its work
 * (jobs_store.c): open the store, report what the library says went
 * wrong, print a JSON result; in the same way for all of them. */
#ifndef CLI_JOBS_STORE_H
#define CLI_JOBS_STORE_H

#include <lanes/jobs.h>

#include <jansson.h>

/* The exit codes of `lanes jobs` beside cli.h's 0..3 (docs/cli.md). */
enum {
    CLI_JOBS_EXIT_NOT_FOUND = 4, /* no such job (or scheduler) */
    CLI_JOBS_EXIT_TIMEOUT = 124  /* wait --timeout passed, as timeout(1) */
};

/* The exit code of the library's error err, the same in every `lanes
 * jobs` subcommand: the one table of docs/cli.md, by what err says.
 *
 *   err                                  exit
 *   LN_EINVAL LN_ERANGE LN_EJSON          2  bad command line or bad input
 *   LN_ETOOBIG
 *   LN_EBACKEND LN_ECORRUPT LN_EACCES     3  the store could not be used
 *   LN_EIO LN_ENOSPC LN_ENOTSUP
 *   LN_ECONNREFUSED
 *   LN_ENOENT                             4  no such job (or scheduler)
 *   any other: LN_EBUSY LN_EEXIST         1  the operation failed
 *   LN_ESTALE LN_ENOMEM LN_ETIMEDOUT
 *   LN_EFORK LN_EAGAIN LN_ECANCELED
 *   LN_ESHUTDOWN LN_EFAILED, unknown
 *
 * LN_ENOMEM is 1: this process ran short, the store is fine. LN_ETIMEDOUT
 * is 1: the library returns it only when a wait ended before what it
 * waited for (a store that does not answer in time is LN_EIO). What a
 * subcommand documents of its own stays at its call site: wait's 124 for
 * LN_ETIMEDOUT, cancel's 2 for a finished job (LN_EINVAL), and opening a
 * store is 2 or 3, never 4 (cli_jobs_open_exit). `lanes worker` and
 * `lanes dash` use the same table (docs/cli.md "Exit codes"). */
int cli_jobs_exit(int err);

/* The exit code of a store that cannot be opened (err from
 * ln_jobs_open_ex), for every command that opens one: CLI_EXIT_USAGE for
 * what cli_jobs_exit calls bad input (a bad URL), else
 * CLI_EXIT_UNAVAILABLE. */
int cli_jobs_open_exit(int err);

/* The library's error err of prog, with its message why (ln_jobs_errmsg):
 * "PROG: LN_X: WHY" as text, {"error":{"code":"LN_X","message":WHY}}
 * under --json. Returns exit_code. */
int cli_jobs_error(int exit_code, const char *prog, int err, const char *why);

/* cli_jobs_error of err with its exit code (cli_jobs_exit) and the
 * message of jobs (ln_jobs_errmsg), for `return cli_jobs_fail(...)`. */
int cli_jobs_fail(ln_jobs *jobs, const char *prog, int err);

/* Take "--max-data-size BYTES" (2..2^30: the store's max_data_size for
 * every later cli_jobs_open) off argv[1..*argc), anywhere, so that every
 * subcommand has it. 0, or the exit code of a bad value. */
int cli_jobs_take_max_data_size(const char *prog, int *argc, char **argv);

/* Open url for prog into *jobs: 0, or the exit code (cli_jobs_open_exit)
 * after "cannot open 'URL': LN_X: WHY". The store's warning, if it has
 * one, goes to stderr (the library never prints). */
int cli_jobs_open(const char *prog, const char *url, ln_jobs **jobs);

/* v (stolen; NULL prints nothing) on stdout as one line of compact JSON. */
void cli_jobs_print_json(json_t *v);

#endif
