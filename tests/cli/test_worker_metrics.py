#!/usr/bin/env python3
"""test_worker_metrics.py - `lanes worker --metrics` end to end.

    test_worker_metrics.py PATH/TO/lanes

Starts a worker on a fresh SQLite store with `--metrics 0` (any free port on
127.0.0.1, named in the start line of --log-format json), scrapes /metrics
while it runs jobs, and parses every scrape with a real Prometheus text
parser (Debian's python3-prometheus-client; the test is skipped, exit 77,
without it). Checks the counters per outcome, the run-time histogram, the
pool's lane gauges and summaries (quantiles, _sum, _count), lanes_build_info, that the counters move as jobs run, that
other paths are 404, and that the worker still stops cleanly on SIGTERM.
"""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

try:
    from prometheus_client.parser import text_string_to_metric_families
except ImportError:
    # Debian's package, when another python3 (pyenv, a venv) comes first.
    sys.path.append("/usr/lib/python3/dist-packages")
    try:
        from prometheus_client.parser import text_string_to_metric_families
    except ImportError:
        print("skipped [prometheus-client]: python3-prometheus-client is not installed")
        sys.exit(77)

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, file=sys.stderr)
    return cond


def lanes(binary, *args):
    return subprocess.run([binary, *args], capture_output=True, text=True, timeout=30)


def scrape(url):
    """The families of one scrape, by name, as the parser gives them."""
    with urllib.request.urlopen(url, timeout=5) as r:
        check(r.status == 200, "GET /metrics is 200")
        check(r.headers.get("Content-Type", "").startswith("text/plain; version=0.0.4"),
              "the Prometheus text content type")
        text = r.read().decode()
    return {f.name: f for f in text_string_to_metric_families(text)}


def value(fams, family, sample, **labels):
    for s in fams[family].samples:
        if s.name == sample and all(s.labels.get(k) == v for k, v in labels.items()):
            return s.value
    return None


def main():
    binary = sys.argv[1]
    tmp = tempfile.mkdtemp(prefix="lanes-metrics-")
    url = "sqlite:" + os.path.join(tmp, "m.db")
    for name in ["ok", "ok", "ok", "bad", "bad"]:
        r = lanes(binary, "jobs", url, "add", "q", name, "{}")
        if r.returncode != 0:
            raise SystemExit("FAIL: lanes jobs add: " + r.stderr)
    handler = '[ "$LANES_JOB_NAME" = ok ] && sleep 0.02'
    w = subprocess.Popen([binary, "worker", url, "q", "--metrics", "0", "--log-format", "json",
                          "--concurrency", "2", "--poll", "20", "--exec", "/bin/sh", "-c", handler],
                         stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    try:
        start = json.loads(w.stderr.readline())
        check(start.get("event") == "start", "the first line is the start line")
        metrics = start.get("metrics", "")
        check(metrics.startswith("http://127.0.0.1:"), "a bare port binds loopback: " + metrics)
        fams = {}
        deadline = time.time() + 20
        while time.time() < deadline:
            fams = scrape(metrics)
            if value(fams, "lanes_worker_jobs", "lanes_worker_jobs_total", outcome="failed") == 2 \
                    and value(fams, "lanes_worker_jobs", "lanes_worker_jobs_total",
                              outcome="completed") == 3:
                break
            time.sleep(0.05)
        jobs = fams.get("lanes_worker_jobs")
        if check(jobs is not None and jobs.type == "counter", "lanes_worker_jobs_total is a counter"):
            for outcome, want in [("completed", 3), ("failed", 2), ("retried", 0), ("stale", 0),
                                 ("waited", 0)]:
                got = value(fams, "lanes_worker_jobs", "lanes_worker_jobs_total", queue="q",
                            outcome=outcome)
                check(got == want, "jobs_total{outcome=%s} is %s, not %s" % (outcome, want, got))
        h = fams.get("lanes_worker_job_duration_seconds")
        if check(h is not None and h.type == "histogram", "the run-time histogram"):
            buckets = [(s.labels["le"], s.value) for s in h.samples if s.name.endswith("_bucket")]
            counts = [v for _, v in buckets]
            check(counts == sorted(counts), "buckets are cumulative")
            check(buckets[-1][0] == "+Inf" and buckets[-1][1] == 5, "+Inf holds every run")
            count = value(fams, "lanes_worker_job_duration_seconds",
                          "lanes_worker_job_duration_seconds_count")
            check(count == 5, "_count is 5, not %s" % count)
            total = value(fams, "lanes_worker_job_duration_seconds",
                          "lanes_worker_job_duration_seconds_sum")
            check(total is not None and total >= 0.06, "_sum covers the 3 sleeps: %s" % total)
        for g in ["lanes_pool_lane_threads", "lanes_pool_lane_busy", "lanes_pool_lane_queued"]:
            f = fams.get(g)
            if check(f is not None and f.type == "gauge", g + " is a gauge"):
                check(value(fams, g, g, lane="jobs") is not None, g + '{lane="jobs"}')
        check(value(fams, "lanes_pool_lane_threads", "lanes_pool_lane_threads", lane="jobs") >= 1,
              "the lane has a thread")
        for g in ["lanes_pool_lane_wait_seconds", "lanes_pool_lane_run_seconds"]:
            f = fams.get(g)
            if check(f is not None and f.type == "summary", g + " is a summary"):
                qs = {s.labels.get("quantile") for s in f.samples}
                check({"0.5", "0.9", "0.99", "1"} <= qs, g + " has the quantiles: %s" % qs)
                check(value(fams, g, g + "_count", lane="jobs") is not None, g + "_count")
                check(value(fams, g, g + "_sum", lane="jobs") is not None, g + "_sum")
        info = fams.get("lanes_build_info")
        if check(info is not None and len(info.samples) == 1, "lanes_build_info"):
            labels = info.samples[0].labels
            check(labels.get("version", "").count(".") == 2 and labels.get("commit"),
                  "lanes_build_info has a version and a commit: %s" % labels)
        # The counters move as more jobs run.
        for _ in range(4):
            lanes(binary, "jobs", url, "add", "q", "ok", "{}")
        deadline = time.time() + 20
        while time.time() < deadline:
            fams = scrape(metrics)
            if value(fams, "lanes_worker_jobs", "lanes_worker_jobs_total", outcome="completed") == 7:
                break
            time.sleep(0.05)
        check(value(fams, "lanes_worker_jobs", "lanes_worker_jobs_total", outcome="completed") == 7,
              "completed moved to 7")
        check(value(fams, "lanes_worker_job_duration_seconds",
                    "lanes_worker_job_duration_seconds_count") == 9, "9 runs timed")
        check(value(fams, "lanes_worker_jobs_taken", "lanes_worker_jobs_taken_total") == 9,
              "9 jobs taken")
        try:
            urllib.request.urlopen(metrics.replace("/metrics", "/other"), timeout=5)
            check(False, "another path is 404")
        except urllib.error.HTTPError as e:
            check(e.code == 404, "another path is 404, not %d" % e.code)
    finally:
        w.send_signal(signal.SIGTERM)
        rest = w.communicate(timeout=30)[1]
    check(w.returncode == 0, "the worker stops with 0 on SIGTERM, not %s" % w.returncode)
    stop = [json.loads(line) for line in rest.splitlines() if line.strip()]
    check(any(x.get("event") == "stop" and x.get("why") == "signal SIGTERM" for x in stop),
          "the stop line says SIGTERM")
    if failures:
        print("%d check(s) failed" % len(failures), file=sys.stderr)
        return 1
    print("ok: /metrics parsed by prometheus_client, counters moved")
    return 0


if __name__ == "__main__":
    sys.exit(main())
