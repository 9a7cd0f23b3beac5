/* bench_report.h - the results in words: results/README.md (a section per
 * claim: the published figure, lanes, the peer, the ratio and its spread,
 * same or opposite direction, the limits of the comparison) and the
 * summary table `lanes bench` prints. Both are drawn from the experiments'
 * JSON documents (bench_json.h) alone. */
#ifndef CLI_BENCH_REPORT_H
#define CLI_BENCH_REPORT_H

#include <jansson.h>

#include <stddef.h>
#include <stdio.h>

/* Write the Markdown report of docs[0..n-1] to path. 0, or -1 with the
 * reason in why. */
int cli_bench_report_write(json_t *const *docs, size_t n, const char *path, char *why,
                           size_t whysize);

/* Print one line per comparison of docs[0..n-1] to f. */
void cli_bench_print_table(FILE *f, json_t *const *docs, size_t n);

/* A figure as the report, the table and the chart all print it: 3
 * significant digits up to 100, whole numbers above, "-" for NaN. */
void cli_bench_fmt_value(char *buf, size_t size, double v);

#endif
