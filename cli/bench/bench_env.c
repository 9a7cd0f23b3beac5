/* bench_env.c - read the machine's description for the results. */
#include "bench_env.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

/* First line of path into buf without its newline; 0 or -1. */
static int read_line(const char *path, char *buf, size_t size) {
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    int rc = fgets(buf, (int)size, f) ? 0 : -1;
    fclose(f);
    if (rc == 0) buf[strcspn(buf, "\n")] = '\0';
    return rc;
}

/* The value of "key<sep>value" in a key/value file, trimmed of spaces,
 * tabs and double quotes. 0 or -1. */
static int read_field(const char *path, const char *key, char sep, char *out, size_t size) {
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    char line[512];
    int rc = -1;
    size_t keylen = strlen(key);
    while (rc != 0 && fgets(line, sizeof line, f)) {
        if (strncmp(line, key, keylen) != 0) continue;
        char *p = line + keylen;
        while (*p == ' ' || *p == '\t') p++;
        if (*p != sep) continue;
        p++;
        while (*p == ' ' || *p == '\t' || *p == '"') p++;
        size_t len = strcspn(p, "\"\n");
        snprintf(out, size, "%.*s", (int)len, p);
        rc = 0;
    }
    fclose(f);
    return rc;
}

/* CPU quota in percent of one CPU from cgroup v2 or v1; 0 = none. */
static long cpu_quota_percent(void) {
    char line[128];
    long quota = -1, period = 0;
    if (read_line("/sys/fs/cgroup/cpu.max", line, sizeof line) == 0) {
        if (strncmp(line, "max", 3) != 0) sscanf(line, "%ld %ld", &quota, &period);
    } else if (read_line("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", line, sizeof line) == 0) {
        quota = atol(line);
        if (read_line("/sys/fs/cgroup/cpu/cpu.cfs_period_us", line, sizeof line) == 0)
            period = atol(line);
    }
    return quota > 0 && period > 0 ? quota * 100 / period : 0;
}

/* Memory limit in MB from cgroup v2 or v1; 0 = none. */
static long cgroup_mem_mb(void) {
    char line[128];
    if (read_line("/sys/fs/cgroup/memory.max", line, sizeof line) != 0 &&
        read_line("/sys/fs/cgroup/memory/memory.limit_in_bytes", line, sizeof line) != 0)
        return 0;
    if (strncmp(line, "max", 3) == 0) return 0;
    unsigned long long bytes = strtoull(line, NULL, 10);
    return bytes >= (1ull << 60) ? 0 : (long)(bytes >> 20); /* "unlimited" */
}

void cli_bench_env_read(cli_bench_env *env) {
    memset(env, 0, sizeof *env);
    struct utsname u;
    int have_uname = uname(&u) == 0;
    snprintf(env->arch, sizeof env->arch, "%.63s", have_uname ? u.machine : "unknown");

    char model[192] = "";
    if (read_field("/proc/cpuinfo", "model name", ':', model, sizeof model) != 0 &&
        read_field("/proc/cpuinfo", "Model", ':', model, sizeof model) != 0 &&
        read_field("/proc/cpuinfo", "CPU part", ':', model, sizeof model) != 0)
        snprintf(model, sizeof model, "unknown CPU");
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    long quota = cpu_quota_percent();
    int n = snprintf(env->cpu, sizeof env->cpu, "%s x%ld", model, cpus > 0 ? cpus : 1);
    if (quota > 0 && n > 0 && (size_t)n < sizeof env->cpu)
        snprintf(env->cpu + n, sizeof env->cpu - (size_t)n, ", CPUQuota %ld%%", quota);

    char mem[64];
    long total_mb = 0;
    if (read_field("/proc/meminfo", "MemTotal", ':', mem, sizeof mem) == 0)
        total_mb = atol(mem) / 1024; /* kB */
    long limit_mb = cgroup_mem_mb();
    env->mem_mb = limit_mb > 0 && (total_mb == 0 || limit_mb < total_mb) ? limit_mb : total_mb;

    if (read_field("/etc/os-release", "PRETTY_NAME", '=', env->os, sizeof env->os) != 0)
        snprintf(env->os, sizeof env->os, "%s %s", have_uname ? u.sysname : "unknown",
                 have_uname ? u.release : "");

#if defined(__clang__)
    snprintf(env->compiler, sizeof env->compiler, "clang %d.%d.%d", __clang_major__,
             __clang_minor__, __clang_patchlevel__);
#elif defined(__GNUC__)
    snprintf(env->compiler, sizeof env->compiler, "gcc %d.%d.%d", __GNUC__, __GNUC_MINOR__,
             __GNUC_PATCHLEVEL__);
#else
    snprintf(env->compiler, sizeof env->compiler, "a C11 compiler");
#endif
}
