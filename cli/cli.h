/* cli.h - the subcommands of the `lanes` command. Each lives in its own
 * file (cli/cmd_<name>.c) and uses only the public headers. A subcommand
 * gets argv starting at its own name and returns the process exit code. */
#ifndef LN_CLI_H
#define LN_CLI_H

/* Exit codes shared by every subcommand. */
enum {
    LN_EXIT_OK = 0,
    LN_EXIT_FAILURE = 1, /* the operation ran and failed */
    LN_EXIT_USAGE = 2,   /* bad command line */
    LN_EXIT_UNAVAILABLE = 3 /* a store, peer or file could not be used */
};

int cmd_bench(int argc, char **argv);
int cmd_jobs(int argc, char **argv);
int cmd_worker(int argc, char **argv);

#endif
