/* test_uv.c - the libuv adapter (include/lanes/uv.h) on a real uv loop:
 * E4's workload (PBKDF2-HMAC-SHA512 hashes on the CPU lane, a small file
 * read on the I/O lane) shows the read is not starved; the contrast case
 * (the read on the hashes' lane) shows that the check can fail. Also:
 * the loop stays alive exactly while work is pending, cancel, close, bad
 * arguments. Only relative time bounds. */
#include "testutil.h"

#include <lanes.h>
#include <lanes/uv.h>

#include <fcntl.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

static ln_pool *make_pool(unsigned cpu_threads) {
    ln_pool_opts o;
    ln_pool_opts_init(&o);
    o.lanes[LN_LANE_CPU].min_threads = cpu_threads;
    o.lanes[LN_LANE_CPU].max_threads = cpu_threads;
    ln_pool *pool = NULL;
    CHECK_EQ(ln_pool_create(&pool, &o), 0);
    return pool;
}

/* ---- E4's two kinds of work ------------------------------------------- */

enum { KEY_LEN = 512, ITERATIONS = 100000, FILE_LEN = 64 * 1024 };

typedef struct job {
    uv_work_t req;
    uint64_t queued_ns, done_ns;
    int status;
    atomic_int ran; /* set by the work callback on a worker */
    /* hash */
    unsigned char key[KEY_LEN];
    /* read */
    const char *path;
    ssize_t nread;
} job;

static void hash_work(uv_work_t *req) {
    job *j = req->data;
    /* crypto.pbkdf2('a', 'b', 100000, 512, 'sha512') of E4 (docs/experiments.md#e4) */
    CHECK_EQ(PKCS5_PBKDF2_HMAC("a", 1, (const unsigned char *)"b", 1, ITERATIONS, EVP_sha512(),
                               KEY_LEN, j->key),
             1);
    j->ran = 1;
}

static void read_work(uv_work_t *req) {
    job *j = req->data;
    static char buf[FILE_LEN];
    int fd = open(j->path, O_RDONLY);
    CHECK(fd >= 0);
    ssize_t total = 0, r;
    while ((r = read(fd, buf, sizeof buf)) > 0) total += r;
    close(fd);
    j->nread = total;
    j->ran = 1;
}

static void after(uv_work_t *req, int status) {
    job *j = req->data;
    j->status = status;
    j->done_ns = ln_now_ns();
}

static void queue(ln_uv_adapter *uv, int lane, job *j, uv_work_cb work) {
    j->req.data = j;
    j->status = 1; /* not yet completed */
    j->queued_ns = ln_now_ns();
    CHECK_EQ(ln_uv_queue_work(uv, lane, &j->req, work, after), 0);
}

static void make_file(char *path) {
    strcpy(path, "/tmp/lanes-test-uv-XXXXXX");
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    char *data = calloc(1, FILE_LEN);
    CHECK_EQ(write(fd, data, FILE_LEN), FILE_LEN);
    free(data);
    close(fd);
}

static uint64_t latency(const job *j) {
    return j->done_ns - j->queued_ns;
}

/* hashes on the CPU lane, then the read on read_lane; returns the read's
 * latency and the earliest hash latency. */
static void run_e4(int nhash, int read_lane, uint64_t *read_ns, uint64_t *first_hash_ns) {
    ln_pool *pool = make_pool(2);
    uv_loop_t loop;
    CHECK_EQ(uv_loop_init(&loop), 0);
    ln_uv_adapter uv;
    CHECK_EQ(ln_uv_attach(&uv, &loop, pool), 0);
    char path[64];
    make_file(path);

    job *hashes = calloc((size_t)nhash, sizeof(*hashes));
    job rd = {.path = path};
    for (int i = 0; i < nhash; i++) queue(&uv, LN_LANE_CPU, &hashes[i], hash_work);
    queue(&uv, read_lane, &rd, read_work);
    CHECK_EQ(uv_run(&loop, UV_RUN_DEFAULT), 0); /* until all are done */

    CHECK_EQ(rd.status, 0);
    CHECK_EQ(rd.nread, FILE_LEN);
    *first_hash_ns = UINT64_MAX;
    for (int i = 0; i < nhash; i++) {
        CHECK_EQ(hashes[i].status, 0);
        CHECK(hashes[i].ran);
        CHECK(memcmp(hashes[i].key, hashes[0].key, KEY_LEN) == 0);
        if (latency(&hashes[i]) < *first_hash_ns) *first_hash_ns = latency(&hashes[i]);
    }
    *read_ns = latency(&rd);

    CHECK_EQ(ln_uv_close(&uv, NULL), 0);
    CHECK_EQ(uv_run(&loop, UV_RUN_DEFAULT), 0);
    CHECK_EQ(uv_loop_close(&loop), 0);
    ln_pool_destroy(pool);
    unlink(path);
    free(hashes);
}

/* E4 through the adapter: 4 hashes keep both CPU threads busy for a while;
 * the read on the I/O lane finishes long before the first hash does. */
TEST(e4_read_not_starved) {
    uint64_t read_ns, hash_ns;
    run_e4(4, LN_LANE_IO, &read_ns, &hash_ns);
    printf("     read %.2f ms, first hash %.1f ms\n", read_ns / 1e6, hash_ns / 1e6);
    CHECK(read_ns < hash_ns / 4);
}

/* The contrast that shows the check above can fail: the same read queued on
 * the hashes' own lane waits for a hash to free a thread (what libuv's one
 * pool does to fs.readFile in E4, docs/experiments.md#e4). */
TEST(same_lane_read_waits) {
    uint64_t read_ns, hash_ns;
    run_e4(2, LN_LANE_CPU, &read_ns, &hash_ns);
    printf("     read %.1f ms, first hash %.1f ms\n", read_ns / 1e6, hash_ns / 1e6);
    CHECK(read_ns > hash_ns / 2);
}

/* ---- loop liveness, cancel, close, bad arguments ------------------------ */

static atomic_int hold_released;

static void gated_work(uv_work_t *req) {
    job *j = req->data;
    while (!atomic_load(&hold_released)) ln_test_sleep_ms(1);
    j->ran = 1;
}

static void noop_work(uv_work_t *req) {
    job *j = req->data;
    j->ran = 1;
}

static int closed;
static void on_close(ln_uv_adapter *a) {
    (void)a;
    closed++;
}

TEST(liveness_cancel_close) {
    ln_pool *pool = make_pool(2);
    uv_loop_t loop;
    CHECK_EQ(uv_loop_init(&loop), 0);
    ln_uv_adapter uv;
    CHECK_EQ(ln_uv_attach(&uv, &loop, pool), 0);
    /* No work pending: the poll handle alone does not keep the loop alive. */
    CHECK_EQ(uv_run(&loop, UV_RUN_DEFAULT), 0);

    /* Two gated jobs occupy both CPU threads; the third waits in the queue
     * and can be canceled. */
    job a = {0}, b = {0}, victim = {0}, c = {0}, d = {0};
    queue(&uv, LN_LANE_CPU, &a, gated_work);
    queue(&uv, LN_LANE_CPU, &b, gated_work);
    queue(&uv, LN_LANE_CPU, &victim, noop_work);
    CHECK_EQ(ln_uv_close(&uv, NULL), UV_EBUSY); /* work pending */
    CHECK_EQ(ln_uv_cancel(&victim.req), 0);
    atomic_store(&hold_released, 1);
    CHECK_EQ(uv_run(&loop, UV_RUN_DEFAULT), 0); /* alive until all three */
    CHECK_EQ(a.status, 0);
    CHECK_EQ(b.status, 0);
    CHECK(a.ran && b.ran);
    CHECK_EQ(victim.status, UV_ECANCELED);
    CHECK_EQ(victim.ran, 0);
    CHECK_EQ(ln_uv_cancel(&victim.req), LN_EINVAL); /* no longer pending */

    /* A job that already ran cannot be canceled. */
    queue(&uv, LN_LANE_IO, &c, noop_work);
    while (!atomic_load(&c.ran)) ln_test_sleep_ms(1); /* running or done */
    CHECK_EQ(ln_uv_cancel(&c.req), UV_EBUSY);
    CHECK_EQ(uv_run(&loop, UV_RUN_DEFAULT), 0);
    CHECK_EQ(c.status, 0);

    /* Bad arguments queue nothing and keep nothing alive. */
    d.req.data = &d;
    CHECK_EQ(ln_uv_queue_work(&uv, LN_LANE_CPU, &d.req, NULL, after), LN_EINVAL);
    CHECK_EQ(ln_uv_queue_work(&uv, 9, &d.req, noop_work, after), LN_EINVAL);
    CHECK_EQ(ln_uv_queue_work(NULL, LN_LANE_CPU, &d.req, noop_work, after), LN_EINVAL);
    CHECK_EQ(ln_uv_queue_work(&uv, LN_LANE_CPU, NULL, noop_work, after), LN_EINVAL);
    CHECK_EQ(uv_run(&loop, UV_RUN_DEFAULT), 0);
    CHECK_EQ(d.ran, 0);
    CHECK_EQ(ln_uv_attach(NULL, &loop, pool), LN_EINVAL);
    CHECK_EQ(ln_uv_close(NULL, NULL), LN_EINVAL);

    CHECK_EQ(ln_uv_close(&uv, on_close), 0);
    CHECK_EQ(closed, 0);
    CHECK_EQ(uv_run(&loop, UV_RUN_DEFAULT), 0);
    CHECK_EQ(closed, 1);
    CHECK_EQ(uv_loop_close(&loop), 0);
    ln_pool_destroy(pool);
}

int main(int argc, char **argv) {
    return ln_test_run(argc, argv,
                       (ln_test_case[]){TESTCASE(e4_read_not_starved),
                                        TESTCASE(same_lane_read_waits),
                                        TESTCASE(liveness_cancel_close),
                                        {0}});
}
