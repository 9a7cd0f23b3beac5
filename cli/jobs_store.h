/* jobs_store.h - what every `lanes jobs` subcommand does around its work
 * (jobs_store.c): open the store, report what the library says went
 * wrong, print a JSON result; in the same way for all of them. */
#ifndef CLI_JOBS_STORE_H
#define CLI_JOBS_STORE_H

#include <lanes/jobs.h>

#include <jansson.h>

/* The library's error err of prog, with its message why (ln_jobs_errmsg):
 * "PROG: LN_X: WHY" as text, {"error":{"code":"LN_X","message":WHY}}
 * under --json. Returns exit_code. */
int cli_jobs_error(int exit_code, const char *prog, int err, const char *why);

/* Open url for prog into *jobs: 0, or the exit code after "cannot open
 * 'URL': LN_X: WHY" (CLI_EXIT_USAGE for a bad URL, else
 * CLI_EXIT_UNAVAILABLE). The store's warning, if it has one, goes to
 * stderr (the library never prints). */
int cli_jobs_open(const char *prog, const char *url, ln_jobs **jobs);

/* v (stolen; NULL prints nothing) on stdout as one line of compact JSON. */
void cli_jobs_print_json(json_t *v);

#endif
