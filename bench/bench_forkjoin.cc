// bench_forkjoin.cc - nested fork-join, lanes against oneTBB's task_group,
// in the same run (issue 32, docs/internals/forkjoin.md).
//
// Workload: fib(32) split to depth 14: each task above the leaves forks
// its two children into a group of its own and joins them (32,767 tasks);
// the leaves compute fib by plain recursion. Both contenders use 2 threads
// (lanes: a 2-thread CPU lane; TBB: a task_arena of concurrency 2) and the
// same task function; the repeats alternate between them so drift on a
// loaded machine hits both. Prints the median (min-max) of each, and the
// ratio lanes / TBB (the target is 1.25x or less).
//   usage: bench_forkjoin [--repeats N] [--threads N] [--n N] [--split N]
#include <lanes.h>

#include <tbb/task_arena.h>
#include <tbb/task_group.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

long fib_seq(int n) {
    return n < 2 ? n : fib_seq(n - 1) + fib_seq(n - 2);
}

struct Job {
    ln_pool *pool;
    int n, split;
    long result;
};

void *lanes_task(void *arg) {
    Job *j = static_cast<Job *>(arg);
    if (j->split == 0 || j->n < 2) {
        j->result = fib_seq(j->n);
        return nullptr;
    }
    Job a{j->pool, j->n - 1, j->split - 1, 0}, b{j->pool, j->n - 2, j->split - 1, 0};
    ln_group *g = nullptr;
    if (ln_group_create(&g, j->pool) != 0 || ln_group_submit(g, LN_LANE_CPU, lanes_task, &a) != 0 ||
        ln_group_submit(g, LN_LANE_CPU, lanes_task, &b) != 0 || ln_group_wait(g) != 0) {
        std::fprintf(stderr, "bench_forkjoin: a lanes fork or join failed\n");
        std::exit(1);
    }
    ln_group_destroy(g);
    j->result = a.result + b.result;
    return nullptr;
}

long tbb_fib(int n, int split) {
    if (split == 0 || n < 2) return fib_seq(n);
    long a = 0, b = 0;
    tbb::task_group g;
    g.run([&] { a = tbb_fib(n - 1, split - 1); });
    g.run([&] { b = tbb_fib(n - 2, split - 1); });
    g.wait();
    return a + b;
}

double ms_since(uint64_t t0) {
    return static_cast<double>(ln_now_ns() - t0) / 1e6;
}

double run_lanes(ln_pool *pool, int n, int split, long want) {
    Job root{pool, n, split, 0};
    ln_task *t = nullptr;
    uint64_t t0 = ln_now_ns();
    if (ln_submit(pool, LN_LANE_CPU, lanes_task, &root, &t) != 0) std::exit(1);
    ln_task_wait(t, nullptr);
    double ms = ms_since(t0);
    ln_task_release(t);
    if (root.result != want) {
        std::fprintf(stderr, "bench_forkjoin: lanes got %ld, want %ld\n", root.result, want);
        std::exit(1);
    }
    return ms;
}

double run_tbb(tbb::task_arena &arena, int n, int split, long want) {
    long r = 0;
    uint64_t t0 = ln_now_ns();
    arena.execute([&] { r = tbb_fib(n, split); });
    double ms = ms_since(t0);
    if (r != want) {
        std::fprintf(stderr, "bench_forkjoin: TBB got %ld, want %ld\n", r, want);
        std::exit(1);
    }
    return ms;
}

struct Summary {
    double median, min, max;
};

Summary summarize(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    size_t k = v.size();
    return {k % 2 ? v[k / 2] : (v[k / 2 - 1] + v[k / 2]) / 2, v.front(), v.back()};
}

} // namespace

int main(int argc, char **argv) {
    int repeats = 11, threads = 2, n = 32, split = 14;
    for (int i = 1; i < argc; i++) {
        if (i + 1 < argc && std::strcmp(argv[i], "--repeats") == 0)
            repeats = std::atoi(argv[++i]);
        else if (i + 1 < argc && std::strcmp(argv[i], "--threads") == 0)
            threads = std::atoi(argv[++i]);
        else if (i + 1 < argc && std::strcmp(argv[i], "--n") == 0)
            n = std::atoi(argv[++i]);
        else if (i + 1 < argc && std::strcmp(argv[i], "--split") == 0)
            split = std::atoi(argv[++i]);
        else {
            std::fprintf(stderr, "usage: bench_forkjoin [--repeats N] [--threads N] [--n N] "
                                 "[--split N]\n");
            return 2;
        }
    }
    if (repeats < 1 || repeats > 1000 || threads < 1 || threads > 256 || n < 1 || n > 40 ||
        split < 0 || split > 20) {
        std::fprintf(stderr, "bench_forkjoin: --repeats 1..1000, --threads 1..256, --n 1..40, "
                             "--split 0..20\n");
        return 2;
    }
    long want = fib_seq(n);

    ln_pool_opts o;
    ln_pool_opts_init(&o);
    o.lanes[LN_LANE_CPU].min_threads = o.lanes[LN_LANE_CPU].max_threads = (unsigned)threads;
    ln_pool *pool = nullptr;
    if (ln_pool_create(&pool, &o) != 0) return 1;
    tbb::task_arena arena(threads);

    run_lanes(pool, n, split, want); // warm-up: threads started, caches
    run_tbb(arena, n, split, want);
    std::vector<double> lanes_ms, tbb_ms, seq_ms;
    for (int r = 0; r < repeats; r++) {
        lanes_ms.push_back(run_lanes(pool, n, split, want));
        tbb_ms.push_back(run_tbb(arena, n, split, want));
        int m = n;
        asm volatile("" : "+r"(m)); // keep the compiler from reusing 'want'
        uint64_t t0 = ln_now_ns();
        volatile long s = fib_seq(m);
        (void)s;
        seq_ms.push_back(ms_since(t0));
    }
    ln_pool_destroy(pool);

    Summary l = summarize(lanes_ms), t = summarize(tbb_ms), q = summarize(seq_ms);
    std::printf("bench_forkjoin: fib(%d) split to depth %d, a group per task, %d threads, "
                "median of %d alternating repeats (min-max)\n",
                n, split, threads, repeats);
    std::printf("%-34s %10.3f %8.3f-%-8.3f\n", "fib recursive, 1 thread", q.median, q.min, q.max);
    std::printf("%-34s %10.3f %8.3f-%-8.3f\n", "oneTBB task_group", t.median, t.min, t.max);
    std::printf("%-34s %10.3f %8.3f-%-8.3f\n", "lanes group per task", l.median, l.min, l.max);
    std::printf("lanes / TBB: %.2fx (issue 32's target: 1.25x or less)\n", l.median / t.median);
    return 0;
}
