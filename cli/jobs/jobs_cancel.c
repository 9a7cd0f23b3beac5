/* jobs_cancel.c - `lanes jobs URL cancel QUEUE ID`: cancel a job from
 * another process (ln_jobs_cancel). Its --help text is its entry in
 * jobs_help.c; docs/cli.md and docs/internals/cancel.md say more. */
#include "jobs_cancel.h"

#include "cli.h"
#include "cli_err.h"
#include "cli_opts.h"
#include "jobs_store.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>

int cli_jobs_cancel(ln_jobs *jobs, const char *prog, const char *const *pos, int npos, int json) {
    if (npos != 2) return cli_usage(prog, "%s", "cancel needs QUEUE ID");
    int err = ln_jobs_cancel(jobs, pos[0], pos[1]);
    /* Documented: a finished job (LN_EINVAL, as a bad queue or id) is exit
     * 2, nothing changes; no such job (LN_ENOENT) is 4. */
    if (err == LN_EINVAL) return cli_jobs_error(CLI_EXIT_USAGE, prog, err, ln_jobs_errmsg(jobs));
    if (err != 0) return cli_jobs_fail(jobs, prog, err);
    if (json) cli_jobs_print_json(json_pack("{s:b,s:s}", "ok", 1, "id", pos[1]));
    return CLI_EXIT_OK;
}
