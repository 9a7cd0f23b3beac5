/* jobs_store.c - opening the store, reporting library errors with the one
 * table of their exit codes, and printing JSON results for the `lanes
 * jobs` subcommands (jobs_store.h). */
#include "jobs_store.h"

#include "cli.h"
#include "cli_err.h"
#include "store_url.h"

#include <lanes.h>

#include <stdio.h>
#include <stdlib.h>

int cli_jobs_exit(int err) {
    switch (err) {
    case LN_EINVAL:
    case LN_ERANGE:
    case LN_EJSON:
    case LN_ETOOBIG:
        return CLI_EXIT_USAGE;
    case LN_EBACKEND:
    case LN_ECORRUPT:
    case LN_EACCES:
    case LN_EIO:
    case LN_ENOSPC:
    case LN_ENOTSUP:
    case LN_ECONNREFUSED:
        return CLI_EXIT_UNAVAILABLE;
    case LN_ENOENT:
        return CLI_JOBS_EXIT_NOT_FOUND;
    default:
        return CLI_EXIT_FAILURE;
    }
}

int cli_jobs_open_exit(int err) {
    return cli_jobs_exit(err) == CLI_EXIT_USAGE ? CLI_EXIT_USAGE : CLI_EXIT_UNAVAILABLE;
}

int cli_jobs_error(int exit_code, const char *prog, int err, const char *why) {
    if (cli_err_is_json()) return cli_error(exit_code, prog, ln_err_name(err), NULL, "%s", why);
    return cli_error(exit_code, prog, ln_err_name(err), NULL, "%s: %s", ln_err_name(err), why);
}

int cli_jobs_fail(ln_jobs *jobs, const char *prog, int err) {
    return cli_jobs_error(cli_jobs_exit(err), prog, err, ln_jobs_errmsg(jobs));
}

int cli_jobs_open(const char *prog, const char *url, ln_jobs **jobs) {
    char msg[512];
    int err = ln_jobs_open_ex(jobs, url, NULL, msg, sizeof msg);
    if (err != 0) {
        int code = cli_jobs_open_exit(err);
        char shown[4096]; /* the password hidden, as the worker's and the dashboard's */
        cli_store_url_shown(shown, sizeof shown, url);
        if (cli_err_is_json())
            return cli_error(code, prog, ln_err_name(err), NULL, "cannot open '%s': %s", shown,
                             msg);
        return cli_error(code, prog, ln_err_name(err), NULL, "cannot open '%s': %s: %s", shown,
                         ln_err_name(err), msg);
    }
    if (ln_jobs_warning(*jobs) != NULL) cli_warning("lanes", ln_jobs_warning(*jobs));
    return 0;
}

void cli_jobs_print_json(json_t *v) {
    char *s = v != NULL ? json_dumps(v, JSON_COMPACT) : NULL;
    if (s != NULL) puts(s);
    free(s);
    json_decref(v);
}
