/* cmd_bench.c - `lanes bench`: rerun the experiments (docs/experiments.md)
 * with lanes and, beside it, the original Node.js library; write
 * <out>/<name>.json (the schema in docs/experiments.md#schema),
 * <out>/<name>.svg and <out>/README.md, and print a summary table. The work
 * is done by bench_runner.c (running), bench_json.c, bench_svg.c and
 * bench_report.c (writing); this file is the command line. */
#include "bench_env.h"
#include "bench_json.h"
#include "bench_peer.h"
#include "bench_report.h"
#include "bench_runner.h"
#include "bench_svg.h"
#include "cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_REPEATS 1000

typedef struct bench_args {
    const exp_experiment *selected[32];
    size_t nselected;
    cli_bench_opts opts;
    const char *out;
    int no_peers;
    int json;
    int list;
} bench_args;

static void usage(FILE *f) {
    fputs("usage: lanes bench [NAME...] [--quick] [--repeats N] [--out DIR] "
          "[--no-peers] [--json]\n\n"
          "Rerun the seed experiments with lanes and, beside it in the same run, the\n"
          "original Node.js library; write DIR/NAME.json (seed-001 schema: every\n"
          "repeat's raw figures), DIR/NAME.svg (chart) and DIR/README.md (report).\n\n"
          "  NAME          experiments to run (default: all):",
          f);
    for (size_t i = 0; i < exp_count(); i++) fprintf(f, " %s", exp_at(i)->name);
    fputs("\n"
          "  --quick       smaller workloads and 3 repeats: checks the pipeline in\n"
          "                seconds, does not test the claims\n"
          "  --repeats N   repeats per experiment, 1..1000 (default 5, 3 with --quick)\n"
          "  --out DIR     where results go (default: results); created if missing\n"
          "  --no-peers    run lanes only, even where Node.js is present\n"
          "  --json        print a JSON summary on stdout instead of the table\n"
          "  --list        list the experiments and exit\n"
          "  -h, --help    this text\n\n"
          "Node.js peers live in bench/peers (run `npm ci` there once); bullmq's\n"
          "BullMQ is tests/interop's (`npm ci` there). Without node or node_modules,\n"
          "lanes runs alone and the results say so. bullmq uses the Redis server of\n"
          "LANES_BENCH_REDIS_URL, else starts its own redis-server (no persistence,\n"
          "a free 127.0.0.1 port) and stops it at the end.\n"
          "Environment: LANES_NODE (node executable), LANES_PEERS_DIR (peer scripts),\n"
          "LANES_SOURCE_DIR (source tree, for the \"script\" field),\n"
          "LANES_BENCH_REDIS_URL (redis://HOST:PORT/DB for bullmq).\n\n"
          "Exit status: 0 everything ran; 1 a run failed (results are still written);\n"
          "2 bad command line; 3 the output directory cannot be used.\n",
          f);
}

/* Report a bad command line; returns CLI_EXIT_USAGE. */
static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int usage_error(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs("lanes bench: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputs("\n(try 'lanes bench --help')\n", stderr);
    va_end(ap);
    return CLI_EXIT_USAGE;
}

/* The value of --opt (next argument, or after '=' in --opt=value). */
static const char *option_value(int argc, char **argv, int *i, const char *name) {
    size_t len = strlen(name);
    if (argv[*i][len] == '=') return argv[*i] + len + 1;
    return *i + 1 < argc ? argv[++*i] : NULL;
}

/* Fill *a from the command line. Returns 0 to go on, -1 when the command
 * is done (--help printed), or an exit code (a usage error). */
static int parse_args(int argc, char **argv, bench_args *a) {
    memset(a, 0, sizeof *a);
    a->out = "results";
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
            usage(stdout);
            return -1;
        } else if (strcmp(arg, "--quick") == 0) {
            a->opts.quick = 1;
        } else if (strcmp(arg, "--no-peers") == 0) {
            a->no_peers = 1;
        } else if (strcmp(arg, "--json") == 0) {
            a->json = 1;
        } else if (strcmp(arg, "--list") == 0) {
            a->list = 1;
        } else if (strncmp(arg, "--repeats", 9) == 0 && (arg[9] == '\0' || arg[9] == '=')) {
            const char *v = option_value(argc, argv, &i, "--repeats");
            char *end = NULL;
            errno = 0;
            unsigned long n = v ? strtoul(v, &end, 10) : 0;
            if (!v || !*v || *end || errno || *v == '-' || n < 1 || n > MAX_REPEATS)
                return usage_error("--repeats needs a whole number from 1 to %d, not '%s'",
                                   MAX_REPEATS, v ? v : "");
            a->opts.repeats = (unsigned)n;
        } else if (strncmp(arg, "--out", 5) == 0 && (arg[5] == '\0' || arg[5] == '=')) {
            a->out = option_value(argc, argv, &i, "--out");
            if (!a->out || !*a->out) return usage_error("--out needs a directory");
        } else if (arg[0] == '-') {
            return usage_error("unknown option '%s'", arg);
        } else {
            const exp_experiment *exp = exp_find(arg);
            if (!exp) {
                char known[512] = "";
                for (size_t k = 0; k < exp_count(); k++) {
                    strncat(known, k ? ", " : "", sizeof known - strlen(known) - 1);
                    strncat(known, exp_at(k)->name, sizeof known - strlen(known) - 1);
                }
                return usage_error("unknown experiment '%s' (known: %s)", arg, known);
            }
            int dup = 0;
            for (size_t k = 0; k < a->nselected; k++) dup |= a->selected[k] == exp;
            if (!dup && a->nselected < sizeof a->selected / sizeof a->selected[0])
                a->selected[a->nselected++] = exp;
        }
    }
    if (a->nselected == 0)
        for (size_t k = 0; k < exp_count() && k < 32; k++) a->selected[a->nselected++] = exp_at(k);
    return 0;
}

/* mkdir -p dir, then prove a file can be created in it. 0 or -1 + why. */
static int prepare_out(const char *dir, char *why, size_t whysize) {
    char path[4096];
    if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path) {
        snprintf(why, whysize, "path too long");
        return -1;
    }
    for (char *p = path + 1;; p++) {
        if (*p != '/' && *p != '\0') continue;
        char saved = *p;
        *p = '\0';
        if (mkdir(path, 0777) != 0 && errno != EEXIST) {
            snprintf(why, whysize, "cannot create '%.900s': %s", path, strerror(errno));
            return -1;
        }
        *p = saved;
        if (saved == '\0') break;
    }
    snprintf(path, sizeof path, "%s/.lanes-bench-XXXXXX", dir);
    int fd = mkstemp(path);
    if (fd < 0) {
        snprintf(why, whysize, "cannot write in '%.900s': %s", dir, strerror(errno));
        return -1;
    }
    close(fd);
    unlink(path);
    return 0;
}

/* A previous run's document for exp in dir, if it is one of ours. */
static json_t *load_previous(const char *dir, const exp_experiment *exp) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.json", dir, exp->name);
    json_t *doc = json_load_file(path, 0, NULL);
    if (json_integer_value(json_object_get(doc, "schemaVersion")) != 1 ||
        !json_is_array(json_object_get(doc, "comparisons"))) {
        json_decref(doc);
        return NULL;
    }
    return doc;
}

static void print_json_summary(const char *out, json_t *const *docs, size_t n, int ok) {
    json_t *list = json_array();
    for (size_t i = 0; i < n; i++) {
        const char *slug = json_string_value(json_object_get(docs[i], "slug"));
        char file[4096];
        json_t *o = json_object();
        json_object_set_new(o, "slug", json_string(slug));
        snprintf(file, sizeof file, "%s/%s.json", out, slug);
        json_object_set_new(o, "json", json_string(file));
        snprintf(file, sizeof file, "%s/%s.svg", out, slug);
        json_object_set_new(o, "svg", json_string(file));
        json_object_set(o, "lanesOnly", json_object_get(docs[i], "lanesOnly"));
        json_object_set(o, "speedup",
                        json_object_get(json_object_get(docs[i], "summary"), "speedup"));
        json_object_set(o, "comparisons", json_object_get(docs[i], "comparisons"));
        json_object_set(o, "errors", json_object_get(docs[i], "errors"));
        json_array_append_new(list, o);
    }
    char report[4096];
    snprintf(report, sizeof report, "%s/README.md", out);
    json_t *top = json_pack("{s:b, s:s, s:s, s:o}", "ok", ok, "out", out, "report", report,
                            "experiments", list);
    json_dumpf(top, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(12));
    fputc('\n', stdout);
    json_decref(top);
}

int cmd_bench(int argc, char **argv) {
    bench_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc != 0) return rc < 0 ? CLI_EXIT_OK : rc;
    if (a.list) {
        for (size_t i = 0; i < exp_count(); i++)
            printf("%-12s seed %-9s %s\n", exp_at(i)->name, exp_at(i)->seeds, exp_at(i)->title);
        return CLI_EXIT_OK;
    }
    char why[1024];
    if (prepare_out(a.out, why, sizeof why) != 0) {
        fprintf(stderr, "lanes bench: output directory unusable: %s\n", why);
        return CLI_EXIT_UNAVAILABLE;
    }
    /* Experiments that draw extra files (writepath's waterfalls) put them
     * beside the JSON: tell them where, so a run with --out never writes
     * into a ./results of the working directory. */
    if (setenv("LANES_BENCH_OUT", a.out, 1) != 0) {
        fprintf(stderr, "lanes bench: setenv: %s\n", strerror(errno));
        return CLI_EXIT_UNAVAILABLE;
    }

    cli_peer_env peers;
    if (a.no_peers) {
        a.opts.no_peer_reason = "--no-peers was given";
    } else if (cli_peer_env_init(&peers, why, sizeof why) != 0) {
        fprintf(stderr,
                "lanes bench: %s; running lanes only (results are marked "
                "lanes-only)\n",
                why);
        a.opts.no_peer_reason = why;
    } else {
        a.opts.peers = &peers;
    }
    a.opts.progress = !a.json && isatty(STDERR_FILENO);

    cli_bench_env env;
    cli_bench_env_read(&env);
    json_t *docs[32] = {NULL}; /* every experiment's latest, for the report */
    json_t *ran[32] = {NULL};  /* those run now, for the table */
    size_t ndocs = 0, nran = 0;
    int failed = 0, unwritable = 0;
    for (size_t i = 0; i < exp_count() && ndocs < 32; i++) {
        const exp_experiment *exp = exp_at(i);
        int chosen = 0;
        for (size_t k = 0; k < a.nselected; k++) chosen |= a.selected[k] == exp;
        if (!chosen) { /* keep the report whole: reuse an earlier run's file */
            docs[ndocs] = load_previous(a.out, exp);
            ndocs += docs[ndocs] != NULL;
            continue;
        }
        cli_bench_run run;
        if (cli_bench_run_experiment(exp, &a.opts, &run) != 0) {
            failed = 1;
            for (size_t e = 0; e < run.nerrors; e++)
                fprintf(stderr, "lanes bench: %s: %s\n", exp->name, run.errors[e]);
        }
        if (run.peer_status == CLI_PEER_SKIPPED && a.opts.peers)
            fprintf(stderr, "lanes bench: %s: peer not run: %s\n", exp->name, run.peer_reason);
        json_t *doc = cli_bench_json(&run, &env);
        cli_bench_run_free(&run);
        if (!doc) {
            fprintf(stderr, "lanes bench: %s: out of memory\n", exp->name);
            failed = 1;
            continue;
        }
        char path[4096];
        snprintf(path, sizeof path, "%s/%s.json", a.out, exp->name);
        int wrote = cli_bench_json_write(doc, path, why, sizeof why) == 0;
        snprintf(path, sizeof path, "%s/%s.svg", a.out, exp->name);
        wrote = wrote && cli_bench_svg_write(doc, path, why, sizeof why) == 0;
        if (!wrote) {
            fprintf(stderr, "lanes bench: %s\n", why);
            unwritable = 1;
        }
        docs[ndocs++] = doc;
        ran[nran++] = doc;
    }

    char path[4096];
    snprintf(path, sizeof path, "%s/README.md", a.out);
    if (cli_bench_report_write(docs, ndocs, path, why, sizeof why) != 0) {
        fprintf(stderr, "lanes bench: %s\n", why);
        unwritable = 1;
    }
    if (a.json) {
        print_json_summary(a.out, ran, nran, !failed && !unwritable);
    } else {
        cli_bench_print_table(stdout, ran, nran);
        printf("\nResults: %s/README.md (report), %s/<experiment>.json and .svg\n", a.out, a.out);
    }
    for (size_t i = 0; i < ndocs; i++) json_decref(docs[i]);
    return unwritable ? CLI_EXIT_UNAVAILABLE : failed ? CLI_EXIT_FAILURE : CLI_EXIT_OK;
}
