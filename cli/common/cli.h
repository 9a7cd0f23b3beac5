/* cli.h - the subcommands of the `lanes` command (docs/cli.md). Each lives
 * in its own folder (cli/<name>/cmd_<name>.c, the code it alone uses
 * beside it; what several share is in cli/common/) and uses only the
 * public headers. A subcommand gets argv starting at its own name and
 * returns the process exit code.
 *
 * Names: the library owns `ln_`/`LN_` (public) and `ln__` (internal); the
 * command never defines those. Its subcommands are `cmd_<name>`; everything
 * else cli/ defines takes `cli_`/`CLI_` (cli_bench_run, CLI_EXIT_USAGE). The
 * benchmark code it runs has its own prefixes: `exp_`/`EXP_` for the
 * experiment interface and the experiments (bench/experiments/, files
 * exp_<name>.c), `bench_`/`BENCH_` for the workloads shared with the bench
 * programs (bench/workloads/, files <name>_load.c). */
#ifndef CLI_H
#define CLI_H

/* Exit codes shared by every subcommand. */
enum {
    CLI_EXIT_OK = 0,
    CLI_EXIT_FAILURE = 1,    /* the operation ran and failed */
    CLI_EXIT_USAGE = 2,      /* bad command line */
    CLI_EXIT_UNAVAILABLE = 3 /* a store, peer or file could not be used */
};

int cmd_bench(int argc, char **argv);
int cmd_dash(int argc, char **argv);
int cmd_jobs(int argc, char **argv);
int cmd_worker(int argc, char **argv);

#endif
