/* main.c - the `lanes` command: dispatches to a subcommand. */
#include "cli.h"
#include "completion.h"
#include "git_commit.h" /* CLI_GIT_COMMIT, written at build time (cmake/git-commit.cmake) */

#include <lanes.h>

#include <stdio.h>
#include <string.h>

static int cmd_completion(int argc, char **argv);

static const struct {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *summary;
} commands[] = {
    {"bench", cmd_bench, "rerun the seed experiments, write JSON, SVG and a report"},
    {"completion", cmd_completion, "print a bash or zsh completion script"},
    {"dash", cmd_dash, "serve a web dashboard and /metrics of a job store"},
    {"jobs", cmd_jobs, "administer a durable job queue (add, counts, list, ...)"},
    {"worker", cmd_worker, "run a program once per job of a queue"},
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

static int cmd_completion(int argc, char **argv) {
    const char *names[NCOMMANDS + 1];
    for (size_t i = 0; i < NCOMMANDS; i++) names[i] = commands[i].name;
    names[NCOMMANDS] = "help";
    return cli_completion(argc, argv, names, NCOMMANDS + 1);
}

static void usage(FILE *f) {
    fprintf(f, "usage: lanes <command> [args...]\n\ncommands:\n");
    for (size_t i = 0; i < NCOMMANDS; i++)
        fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\n'lanes <command> --help' (or 'lanes help <command>') describes one "
               "command;\n'lanes --version' prints the version and the commit it was "
               "built from.\n");
}

int main(int argc, char **argv) {
    if (argc < 2) {
        usage(stderr);
        return CLI_EXIT_USAGE;
    }
    if (strcmp(argv[1], "help") == 0 && argc > 2) { /* `lanes help jobs` */
        for (size_t i = 0; i < NCOMMANDS; i++)
            if (strcmp(argv[2], commands[i].name) == 0)
                return commands[i].fn(2, (char *[]){argv[2], "--help", NULL});
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return CLI_EXIT_OK;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("lanes %s (commit %s)\n", ln_version_string(), CLI_GIT_COMMIT);
        return CLI_EXIT_OK;
    }
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (strcmp(argv[1], commands[i].name) == 0) return commands[i].fn(argc - 1, argv + 1);
    fprintf(stderr, "lanes: unknown command '%s'\n\n", argv[1]);
    usage(stderr);
    return CLI_EXIT_USAGE;
}
