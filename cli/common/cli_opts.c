/* cli_opts.c - the table-driven option parser of `lanes jobs` (cli_opts.h). */
#include "cli_opts.h"

#include "cli.h"
#include "cli_err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int cli_usage(const char *prog, const char *fmt, ...) {
    char msg[1024], hint[96];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(hint, sizeof hint, "(see '%s --help')", prog);
    return cli_error(CLI_EXIT_USAGE, prog, "LN_EINVAL", hint, "%s", msg);
}

int cli_opts_help_asked(int argc, char **argv) {
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) return 1;
    return 0;
}

/* 1 if the space-separated list of words holds word (NULL: every word). */
static int lists(const char *words, const char *word) {
    if (words == NULL) return 1;
    size_t n = strlen(word);
    for (const char *p = words; (p = strstr(p, word)) != NULL; p += n)
        if ((p == words || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0')) return 1;
    return 0;
}

static const cli_opt *find(const cli_opt *opts, const char *name) {
    for (const cli_opt *o = opts; o->name != NULL; o++)
        if (strcmp(o->name, name) == 0) return o;
    return NULL;
}

int cli_opts_parse(const cli_cmdline *cl, int argc, char **argv, void *out, const char **pos,
                   int *npos) {
    for (int i = 0; i < argc; i++) {
        const char *s = argv[i];
        if (strncmp(s, "--", 2) != 0) {
            if (*npos >= cl->max_pos) return cli_usage(cl->prog, "unexpected argument '%s'", s);
            pos[(*npos)++] = s;
            continue;
        }
        const cli_opt *o = find(cl->opts, s);
        if (o == NULL) return cli_usage(cl->prog, "unknown option '%s'", s);
        if (!lists(o->cmds, cl->cmd))
            return cli_usage(cl->prog, "option '%s' does not apply to '%s'", s, cl->cmd);
        if (!o->value) {
            *(int *)((char *)out + o->at) = 1;
        } else if (i + 1 >= argc) {
            return cli_usage(cl->prog, "%s needs a value", s);
        } else {
            *(const char **)((char *)out + o->at) = argv[++i];
        }
    }
    return 0;
}
