/* bench_env.h - the machine an experiment ran on, read from the machine
 * itself (uname, /proc, cgroup limits, /etc/os-release, the compiler). */
#ifndef CLI_BENCH_ENV_H
#define CLI_BENCH_ENV_H

typedef struct cli_bench_env {
    char arch[64];     /* uname -m, e.g. "x86_64" */
    char cpu[320];     /* "<model> x<online CPUs>[, CPUQuota N%]" */
    long mem_mb;       /* MemTotal, or the cgroup memory limit if lower */
    char os[160];      /* PRETTY_NAME of /etc/os-release, else uname */
    char compiler[64]; /* "gcc 12.2.0" */
} cli_bench_env;

/* Fill *env. Never fails: what cannot be read becomes "unknown" or 0. */
void cli_bench_env_read(cli_bench_env *env);

#endif
