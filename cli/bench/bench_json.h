/* bench_json.h - an experiment's results as the results JSON document
 * (schemaVersion 1, described in docs/experiments.md), with lanes' additions. The chart
 * (bench_svg.c) and the report (bench_report.c) are drawn from this document alone, so every
 * published figure can be traced to the raw data beside it.
 *
 * Base fields (shared with the results of the re-tested claims): schemaVersion, slug,
 * tool{name,repo,version}, environment{arch,cpu,memMB,os,runtime}, method{hypothesis,conditions[],
 * repeats}, script, scriptSha256, runs[]{run,<figure>...,wallMs},
 * summary{<figure>{median,min,max,unit}..., speedup}, chart{title{ko,en},
 * series[]{id,role,label,short}, panels[]{title,unit,kind,better,keys}},
 * createdAt, claim{quote,url,numbers[]}.
 * Additions: summary.<figure>.better ("lower"/"higher"),
 * experiment{name,title,seeds,quick,params}, peer{...,status,
 * reason,script,scriptSha256} (null without a peer), lanesOnly,
 * comparisons[]{kind,what,target,baseline,published,publishedRatio,ratio,
 * perRepeat{median,min,max,n},direction,headline}, limits[], errors[],
 * claim.source, claim.translation. A comparison's direction is "same" or
 * "opposite" (to the published ratio), "mixed" (repeats disagree), "target
 * better" or "baseline better" (nothing published), "bound" (a bound
 * comparison), "target met" or "target missed" (a target comparison), or
 * "not measured". lanesOnly is true when the file holds no figure of the
 * original library: its peer was skipped (peer.reason says why), or the
 * experiment has none (peer is null). */
#ifndef CLI_BENCH_JSON_H
#define CLI_BENCH_JSON_H

#include "bench_env.h"
#include "bench_runner.h"

#include <jansson.h>

#include <stddef.h>

/* Build the document for run on env. NULL only if out of memory. The
 * caller owns the reference. */
json_t *cli_bench_json(const cli_bench_run *run, const cli_bench_env *env);

/* Write doc to path (through a temporary file and rename). 0, or -1 with
 * the reason in why. */
int cli_bench_json_write(const json_t *doc, const char *path, char *why, size_t whysize);

/* Round to 6 decimals, as the base schema's summary does. */
double cli_bench_round6(double x);

#endif
