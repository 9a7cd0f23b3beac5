/* bench_svg.h - draw an experiment's chart as a standalone SVG from its
 * results JSON document (bench_json.h): one titled panel per chart panel, one horizontal
 * bar per series ending at the median (marked), a min-max whisker, the
 * value in words, and a labelled axis with its unit (log scale when the
 * values span more than a factor of 30). */
#ifndef CLI_BENCH_SVG_H
#define CLI_BENCH_SVG_H

#include <jansson.h>

#include <stddef.h>

/* Write the chart of doc (as built by cli_bench_json) to path. 0, or -1
 * with the reason in why. */
int cli_bench_svg_write(const json_t *doc, const char *path, char *why, size_t whysize);

#endif
