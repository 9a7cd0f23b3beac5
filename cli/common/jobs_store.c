/* jobs_store.c - opening the store, reporting library errors with the one
 * table of their exit codes, and printing JSON results for the `lanes
 * jobs` subcommands (jobs_store.h). */
#include "jobs_store.h"

#include "cli.h"
#include "cli_err.h"
#include "cli_opts.h"
#include "store_url.h"

#include <lanes.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* --max-data-size, taken off the command line; 0: the library's default */
static size_t max_data;

int cli_jobs_take_max_data_size(const char *prog, int *argc, char **argv) {
    for (int i = 1; i < *argc; i++) {
        if (strcmp(argv[i], "--max-data-size") != 0) continue;
        unsigned long long v = 0;
        char *end = NULL;
        const char *val = i + 1 < *argc ? argv[i + 1] : NULL;
        if (max_data != 0) return cli_usage(prog, "%s", "--max-data-size is given twice");
        if (val != NULL && *val >= '0' && *val <= '9') v = strtoull(val, &end, 10);
        if (val == NULL || end == NULL || *end != '\0' || v < 2 || v > (1ull << 30))
            return cli_usage(prog, "--max-data-size must be 2..1073741824 bytes, not '%s'",
                             val != NULL ? val : "");
        max_data = (size_t)v;
        memmove(argv + i, argv + i + 2, (size_t)(*argc - i - 2 + 1) * sizeof *argv);
        *argc -= 2;
        i--;
    }
    return 0;
}

int cli_jobs_open(const char *prog, const char *url, ln_jobs **jobs) {
    char msg[512];
    ln_jobs_opts o;
    ln_jobs_opts_init(&o);
    if (max_data != 0) o.max_data_size = max_data;
    char *open_url = cli_store_url_resolve(url, msg, sizeof msg); /* a password file */
    if (open_url == NULL) return cli_error(CLI_EXIT_USAGE, prog, "LN_EINVAL", NULL, "%s", msg);
    int err = ln_jobs_open_ex(jobs, open_url, &o, msg, sizeof msg);
    free(open_url);
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
