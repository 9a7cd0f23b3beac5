/* jobs_depth.h - `bench_jobs --depth` (jobs_depth.c): the cost of an open
 * and of first, middle and last pages as the store grows. */
#ifndef BENCH_JOBS_DEPTH_H
#define BENCH_JOBS_DEPTH_H

/* Runs with bench_jobs's arguments (one of them --depth); exit status. */
int bench_jobs_depth(int argc, char **argv);

#endif
