/* fuzz_flow.c - the flow file of `lanes jobs URL flow FILE.json`
 * (cli/jobs_flow.c: a tree in FlowProducer.add's shape), which another
 * program or a person wrote. Input: the file's bytes. The tree is read
 * and, when it is one, added to a SQLite store in a private temporary
 * directory (opened once). Checks: an exit code of the CLI's (0, usage,
 * failure), never a crash or undefined behaviour (a number out of range
 * included). The command's output goes to /dev/null. */
#include "cli.h"
#include "fuzz_common.h"
#include "jobs_flow.h"
#include "lanes/jobs.h"

#include <unistd.h>

static char dir[64], file[96];
static ln_jobs *jobs;

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    snprintf(dir, sizeof dir, "/tmp/lanes-fuzz-flow-XXXXXX");
    if (mkdtemp(dir) == NULL) abort();
    char url[128];
    snprintf(url, sizeof url, "sqlite:%s/store.db?sync=normal", dir);
    snprintf(file, sizeof file, "%s/flow.json", dir);
    if (ln_jobs_open(&jobs, url) != 0) abort();
    if (freopen("/dev/null", "w", stdout) == NULL) abort();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    FILE *f = fopen(file, "wb");
    if (f == NULL || fwrite(data, 1, size, f) != size || fclose(f) != 0) abort();
    const char *pos[1] = {file};
    int rc = cli_jobs_flow(jobs, 1, pos, (size & 1) != 0);
    FUZZ_CHECK(rc >= CLI_EXIT_OK && rc <= CLI_EXIT_UNAVAILABLE, "rc %d", rc);
    return 0;
}
