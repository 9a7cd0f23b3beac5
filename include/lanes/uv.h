/* lanes/uv.h - header-only adapter that runs libuv work on lanes lanes.
 *
 * In the manner of hiredis's adapters/libuv.h: liblanes never includes
 * uv.h; this header joins the two. A uv_poll_t watches the pool's
 * completion descriptor (ln_pool_completion_fd) and runs the pool's
 * completions (ln_pool_run_completions) on the loop thread whenever it is
 * readable. On top of that, ln_uv_queue_work() is uv_queue_work() with a
 * lane: the work callback runs on a worker of that lane, the after-work
 * callback on the loop thread. A libuv program can so put its crypto on the
 * CPU lane and its file reads on the I/O lane, and a short read never waits
 * behind long hashes the way it does in libuv's single thread pool.
 *
 *     ln_uv_adapter uv;
 *     ln_uv_attach(&uv, loop, pool);
 *     ln_uv_queue_work(&uv, LN_LANE_CPU, &hash_req, hash_work, hash_done);
 *     ln_uv_queue_work(&uv, LN_LANE_IO, &read_req, read_work, read_done);
 *     uv_run(loop, UV_RUN_DEFAULT);      returns when both are done
 *     ln_uv_close(&uv, NULL);
 *     uv_run(loop, UV_RUN_DEFAULT);      lets the poll handle close
 *
 * Threads: every function here must be called on the loop's thread (as for
 * libuv itself). The pool may be shared with other users, but only one
 * adapter (one loop) may serve a pool's completions, since
 * ln_pool_run_completions runs those of every ln_submit_cb() caller.
 *
 * Why ln_uv_queue_work takes the adapter rather than (loop, pool): the poll
 * handle must exist once per pool, and finding it from (loop, pool) would
 * cost a uv_walk over all of the loop's handles on every call.
 *
 * Errors are negative errno values from either library (UV_EINVAL ==
 * LN_EINVAL == -EINVAL on Unix).
 */
#ifndef LANES_UV_H
#define LANES_UV_H

#include <lanes.h>
#include <uv.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One adapter per (loop, pool); the caller owns the storage, which must stay
 * valid until the close callback ran (or, without one, until the loop ran
 * once after ln_uv_close). Fields are private. */
typedef struct ln_uv_adapter {
    uv_poll_t poll; /* first member: a poll handle is its adapter */
    ln_pool *pool;
    unsigned pending; /* requests whose after-work callback has not run */
    void (*close_cb)(struct ln_uv_adapter *adapter);
} ln_uv_adapter;

/* The poll handle became readable: run every pending completion. A poll
 * error (status < 0) is no reason to strand completions either, and the
 * next readiness will call us again. */
static inline void ln_uv__on_readable(uv_poll_t *poll, int status, int events) {
    (void)status;
    (void)events;
    ln_uv_adapter *a = (ln_uv_adapter *)poll;
    ln_pool_run_completions(a->pool);
}

/* Start watching pool's completions on loop. The poll handle does not keep
 * the loop alive by itself: only pending ln_uv_queue_work requests do.
 * 0, LN_EINVAL, or a libuv error (then nothing needs closing). */
static inline int ln_uv_attach(ln_uv_adapter *adapter, uv_loop_t *loop, ln_pool *pool) {
    if (adapter == NULL || loop == NULL || pool == NULL) return LN_EINVAL;
    int fd = ln_pool_completion_fd(pool);
    if (fd < 0) return fd;
    int rc = uv_poll_init(loop, &adapter->poll, fd);
    if (rc != 0) return rc;
    adapter->pool = pool;
    adapter->pending = 0;
    adapter->close_cb = NULL;
    adapter->poll.data = adapter;
    rc = uv_poll_start(&adapter->poll, UV_READABLE, ln_uv__on_readable);
    if (rc != 0) {
        uv_close((uv_handle_t *)&adapter->poll, NULL);
        return rc;
    }
    uv_unref((uv_handle_t *)&adapter->poll);
    return 0;
}

/* ---- uv_queue_work on a lane ------------------------------------------- */

/* A request carries its adapter and task handle in the two first slots of
 * uv_req_t's reserved[] array. libuv uses those only for requests it runs
 * itself, and this one never goes to libuv. */
enum { LN_UV__ADAPTER = 0, LN_UV__TASK = 1 };

static inline void *ln_uv__work(void *arg) {
    uv_work_t *req = (uv_work_t *)arg;
    req->work_cb(req);
    return NULL;
}

static inline void ln_uv__after(void *arg, void *result, int status) {
    (void)result;
    uv_work_t *req = (uv_work_t *)arg;
    ln_uv_adapter *a = (ln_uv_adapter *)req->reserved[LN_UV__ADAPTER];
    ln_task_release((ln_task *)req->reserved[LN_UV__TASK]);
    req->reserved[LN_UV__TASK] = NULL;
    if (--a->pending == 0) uv_unref((uv_handle_t *)&a->poll);
    if (req->after_work_cb != NULL)
        req->after_work_cb(req, status == LN_ECANCELED ? UV_ECANCELED : status);
}

/* Like uv_queue_work(loop, req, work_cb, after_work_cb), but work_cb runs
 * on a worker of lane: after_work_cb(req, 0) runs on the loop thread once
 * it has returned, or after_work_cb(req, UV_ECANCELED) if it never ran
 * (ln_uv_cancel, or the pool was destroyed). The caller owns req and keeps
 * it valid until after_work_cb; req->data is the caller's, req->loop is
 * set. While any request is pending the loop stays alive. 0, LN_EINVAL
 * (NULL adapter, req or work_cb, bad lane), LN_EAGAIN, LN_ESHUTDOWN,
 * LN_ENOMEM (then after_work_cb never runs). */
static inline int ln_uv_queue_work(ln_uv_adapter *adapter, int lane, uv_work_t *req,
                                   uv_work_cb work_cb, uv_after_work_cb after_work_cb) {
    if (adapter == NULL || req == NULL || work_cb == NULL) return LN_EINVAL;
    req->type = UV_WORK;
    req->loop = adapter->poll.loop;
    req->work_cb = work_cb;
    req->after_work_cb = after_work_cb;
    req->reserved[LN_UV__ADAPTER] = adapter;
    ln_task *task = NULL;
    int rc = ln_submit_cb(adapter->pool, lane, ln_uv__work, req, ln_uv__after, &task);
    if (rc != 0) return rc;
    req->reserved[LN_UV__TASK] = task;
    if (adapter->pending++ == 0) uv_ref((uv_handle_t *)&adapter->poll);
    return 0;
}

/* Like uv_cancel for a request of ln_uv_queue_work: 0 if its work had not
 * started (after_work_cb will run with UV_ECANCELED), UV_EBUSY once it has,
 * LN_EINVAL if req is not pending. */
static inline int ln_uv_cancel(uv_work_t *req) {
    if (req == NULL || req->reserved[LN_UV__TASK] == NULL) return LN_EINVAL;
    int rc = ln_task_cancel((ln_task *)req->reserved[LN_UV__TASK]);
    return rc == LN_EBUSY ? UV_EBUSY : rc;
}

/* ---- cleanup ------------------------------------------------------------- */

static inline void ln_uv__on_close(uv_handle_t *handle) {
    ln_uv_adapter *a = (ln_uv_adapter *)handle;
    if (a->close_cb != NULL) a->close_cb(a);
}

/* Stop watching and close the poll handle; close_cb (may be NULL) runs on
 * the loop once it is closed, after which the storage may be freed. Call it
 * before ln_pool_destroy and uv_loop_close. UV_EBUSY while requests are
 * still pending (their completions need the handle), LN_EINVAL. */
static inline int ln_uv_close(ln_uv_adapter *adapter, void (*close_cb)(ln_uv_adapter *adapter)) {
    if (adapter == NULL) return LN_EINVAL;
    if (adapter->pending > 0) return UV_EBUSY;
    adapter->close_cb = close_cb;
    uv_poll_stop(&adapter->poll);
    uv_close((uv_handle_t *)&adapter->poll, ln_uv__on_close);
    return 0;
}

#ifdef __cplusplus
}
#endif
#endif /* LANES_UV_H */
