/* test_starvation.c - the E4 effect (docs/experiments.md#e4): with
 * LANES_THREADS=4, eight PBKDF2-HMAC-SHA512 hashes (100,000 iterations,
 * 512-byte key) on the CPU lane must not delay a small file read submitted
 * afterwards on the I/O lane. The bound is relative: the read must finish
 * within 25% of one hash's time measured alone in the same run. The control
 * case puts the read on the CPU lane, as libuv's single pool does, and must
 * show the starvation (the read waits for a hash), so the test can fail. */
#include "testutil.h"

#include <lanes.h>

#include <fcntl.h>
#include <openssl/evp.h>
#include <string.h>
#include <unistd.h>

static void *hash_task(void *arg) {
    unsigned char out[512];
    (void)arg;
    if (PKCS5_PBKDF2_HMAC("a", 1, (const unsigned char *)"b", 1, 100000, EVP_sha512(),
                          (int)sizeof out, out) != 1)
        abort();
    return NULL;
}

static void *read_task(void *arg) {
    char buf[4096];
    int fd = open((const char *)arg, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return (void *)(intptr_t)-1;
    ssize_t n = read(fd, buf, sizeof buf);
    close(fd);
    return (void *)(intptr_t)n;
}

/* Latency (ns) of a read submitted on read_lane right after 8 hashes. */
static uint64_t read_under_load(ln_pool *p, int read_lane, const char *path) {
    ln_group *g;
    CHECK_EQ(ln_group_create(&g, p), 0);
    for (int i = 0; i < 8; i++) CHECK_EQ(ln_group_submit(g, LN_LANE_CPU, hash_task, NULL), 0);
    ln_task *t;
    uint64_t t0 = ln_now_ns();
    CHECK_EQ(ln_submit(p, read_lane, read_task, (void *)path, &t), 0);
    void *n;
    CHECK_EQ(ln_task_wait(t, &n), 0);
    uint64_t lat = ln_now_ns() - t0;
    CHECK((intptr_t)n > 0);
    ln_task_release(t);
    CHECK_EQ(ln_group_wait(g), 0);
    ln_group_destroy(g);
    return lat;
}

TEST(io_lane_not_starved_by_cpu_lane) {
    char path[] = "/tmp/lanes-e4-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    CHECK(write(fd, "const fs = require('fs');\n", 26) == 26);
    close(fd);

    setenv("LANES_THREADS", "4", 1);
    ln_pool_opts o;
    ln_pool_opts_init(&o);
    CHECK_EQ(o.lanes[LN_LANE_CPU].max_threads, 4);
    ln_pool *p;
    CHECK_EQ(ln_pool_create(&p, &o), 0);

    uint64_t t0 = ln_now_ns();
    hash_task(NULL);
    uint64_t hash_alone = ln_now_ns() - t0;

    uint64_t io_lat = read_under_load(p, LN_LANE_IO, path);
    uint64_t cpu_lat = read_under_load(p, LN_LANE_CPU, path);
    printf("one hash alone %.1f ms; read on the I/O lane under 8 hashes %.3f ms; "
           "read on the CPU lane (libuv's single pool) %.1f ms\n",
           hash_alone / 1e6, io_lat / 1e6, cpu_lat / 1e6);
    CHECK(io_lat < hash_alone / 4);
    /* Control: on the hashes' own lane the read waits for a hash to end. */
    CHECK(cpu_lat > hash_alone / 2);
    ln_pool_destroy(p);
    unlink(path);
}

int main(int argc, char **argv) {
    return ln_test_run(argc, argv,
                       (ln_test_case[]){TESTCASE(io_lane_not_starved_by_cpu_lane), {0}});
}
