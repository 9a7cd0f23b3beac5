/* main.c - the `writepath` program: the write-path service of experiment E3
 * and its tools. See docs/writepath.md. */
#include "service.h"

#include <stdio.h>
#include <string.h>

static const struct {
    const char *name;
    int (*main)(int argc, char **argv);
    const char *help;
} commands[] = {
    {"serve", wp_serve_main, "run the HTTP service (naive or async)"},
    {"check", wp_check_main, "drain the queue, then check counts and notifications"},
    {"waterfall", wp_waterfall_main, "draw one trace as an SVG waterfall"},
    {"boundary", wp_boundary_main, "response-boundary times of the traces in a file"},
};

int main(int argc, char **argv) {
    for (size_t i = 0; argc > 1 && i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(argv[1], commands[i].name) == 0) return commands[i].main(argc - 1, argv + 1);
    fprintf(stderr, "usage: writepath COMMAND [ARGS]  (COMMAND --help for its arguments)\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(stderr, "  %-10s %s\n", commands[i].name, commands[i].help);
    return 2;
}
