/* cli_opts.h - the options of a `lanes jobs URL <sub>` command line, read
 * by one table-driven parser: each command family (cmd_jobs.c,
 * jobs_schedule.c, jobs_ratelimit.c) keeps a table of its options and its
 * own checks of their values; the parser does the rest, with the same
 * messages for every subcommand (docs/cli.md):
 *
 *   unknown option '--x'                   no entry of the table names it
 *   option '--x' does not apply to 'sub'   its entry does not list sub
 *   --x needs a value                      a valued option ends argv
 *   unexpected argument 'a'                a positional argument too many
 *
 * each as a usage error (exit 2, LN_EINVAL) with the hint
 * "(see 'PROG --help')" under the text, or as a JSON error under --json. */
#ifndef CLI_OPTS_H
#define CLI_OPTS_H

#include <stddef.h>

/* One option. A flag sets an int to 1; a valued option takes the next
 * argument, whatever it is, into a const char *. Both live in the caller's
 * struct, at offset at. */
typedef struct cli_opt {
    const char *name; /* "--limit"; NULL ends the table */
    int value;        /* 1: takes a value; 0: a flag */
    size_t at;        /* offsetof the member it goes to */
    const char *cmds; /* the subcommands that take it, e.g. "list schedules";
                         NULL: every one */
} cli_opt;

/* The options every subcommand takes, into its int members json and
 * create (--help is found before parsing, by cli_opts_help_asked), and
 * the entry that ends a table. */
/* clang-format off */
#define CLI_OPTS_EVERY(type) \
    {"--json", 0, offsetof(type, json), NULL}, {"--create", 0, offsetof(type, create), NULL}
#define CLI_OPTS_END {NULL, 0, 0, NULL}
/* clang-format on */

/* What a command line is parsed against. */
typedef struct cli_cmdline {
    const cli_opt *opts; /* the table */
    const char *cmd;     /* the subcommand ("list"): which entries apply */
    const char *prog;    /* who speaks in errors ("lanes jobs list") */
    int max_pos;         /* positional arguments taken at most */
} cli_cmdline;

/* Parse argv[0..argc) (what follows the subcommand) into out: options
 * as the table says, any other argument (including "-" and a lone
 * "-x") a positional one, into pos[0..max_pos) with their count in
 * *npos. Returns 0, or CLI_EXIT_USAGE after reporting the error. */
int cli_opts_parse(const cli_cmdline *cl, int argc, char **argv, void *out, const char **pos,
                   int *npos);

/* A usage error of prog: the message, and the hint "(see 'PROG --help')"
 * under it in text mode. Returns CLI_EXIT_USAGE. */
int cli_usage(const char *prog, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* 1 if any of argv[1..argc) is --help or -h. */
int cli_opts_help_asked(int argc, char **argv);

#endif
