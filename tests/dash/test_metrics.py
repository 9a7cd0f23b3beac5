"""test_metrics.py - /metrics of `lanes dash` read by a real Prometheus
text parser (Debian's python3-prometheus-client), on one store.

    python3 test_metrics.py sqlite|redis LANES_BIN

Fills two queues (one paused, one named with the characters the format
escapes), starts `lanes dash` on a free port, and checks that every
lanes_jobs sample equals what `lanes jobs counts` says, that the paused
flag, lanes_workers (a running `lanes worker`), lanes_store_up,
lanes_build_info and lanes_queue_oldest_waiting_seconds are
right, that the bullmq_* series have BullMQ's counts (a paused queue's
jobs still waiting or prioritized; the metrics totals of a worker run
with --metrics-points), on Redis the same lines as stock BullMQ's
queue.exportPrometheusMetrics() prints (tests/interop's Node side), and
that the exposition parses. Exit 77 = skipped (no prometheus_client, or redis without LANES_TEST_REDIS_URL).
"""
import json
import os
import re
import subprocess
import sys
import time
import urllib.request

from dashutil import SKIP, Run, check

try:
    from prometheus_client.parser import text_string_to_metric_families
except ImportError:
    print("skipped [prometheus-client]: prometheus_client not found (Debian: python3-prometheus-client)")
    sys.exit(SKIP)

run_ = Run(sys.argv[1], sys.argv[2], "metrics")
store, url, lanes_bin, lanes = run_.store, run_.url, run_.lanes_bin, run_.lanes

ODD = 'we"ird\\q'  # a queue name with the characters label values escape


def scrape(base):
    with urllib.request.urlopen(base + "/metrics", timeout=10) as r:
        ctype = r.headers.get("Content-Type", "")
        check(ctype.startswith("text/plain; version=0.0.4"), ctype)
        return r.read().decode("utf-8")


def bullmq_counts(families):
    """{(queue, state): n} of bullmq_job_count and the two totals."""
    got = {}
    for s in families["bullmq_job_count"].samples:
        got[(s.labels["queue"], s.labels["state"])] = s.value
    for fam in ("bullmq_job_completed", "bullmq_job_failed"):
        check(families[fam].type == "counter", fam)
        for s in families[fam].samples:
            got[(s.labels["queue"], s.name)] = s.value
    return got


def node_export(queue):
    """The bullmq_* lines stock BullMQ prints for queue (Redis only), or
    None without the interop tests' node_modules."""
    interop = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "interop")
    if not os.path.isdir(os.path.join(interop, "node_modules", "bullmq")):
        return None
    r = subprocess.run(["node", os.path.join(interop, "interop.mjs"), "prom-export", queue,
                        run_.prefix], capture_output=True, text=True, timeout=60)
    check(r.returncode == 0, r.stderr)
    return [ln for ln in r.stdout.splitlines() if ln.startswith("bullmq_")]


def check_bullmq(families, text):
    got = bullmq_counts(families)
    want = {("mail", "waiting"): 3, ("mail", "delayed"): 1, (ODD, "prioritized"): 1,
            (ODD, "waiting"): 1, ("done", "completed"): 2, ("done", "failed"): 1,
            ("done", "bullmq_job_completed_total"): 2, ("done", "bullmq_job_failed_total"): 1}
    for q in ("mail", ODD, "done"):
        for state in ("active", "completed", "delayed", "failed", "prioritized", "waiting",
                      "waiting-children", "bullmq_job_completed_total",
                      "bullmq_job_failed_total"):
            check(got.get((q, state)) == want.get((q, state), 0), (q, state, got.get((q, state))))
    run_.ok("%s: bullmq_* series as BullMQ counts" % store)
    if store != "redis":
        return
    for q in ("mail", ODD, "done"):
        node = node_export(q)
        if node is None:
            print("no tests/interop/node_modules: BullMQ's own export not compared")
            return
        # BullMQ writes "{queue=\"q\", state=\"s\"}"; the same series
        mine = [ln for ln in text.splitlines()
                if ln.startswith("bullmq_") and ('queue="%s"' % label_escape(q)) in ln]
        check(sorted(mine) == sorted(re.sub(r'", ', '",', ln) for ln in node), (mine, node))
    run_.ok("redis: bullmq_* lines equal stock BullMQ's exportPrometheusMetrics")


def label_escape(s):
    return s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def main():
    for i in range(3):
        lanes("jobs", url, "add", "mail", "send", '{"i":%d}' % i)
    lanes("jobs", url, "add", "mail", "later", "{}", "--delay", "3600000")
    lanes("jobs", url, "add", ODD, "x", "{}", "--priority", "2")
    lanes("jobs", url, "add", ODD, "y", "{}")
    lanes("jobs", url, "pause", ODD)
    for i in range(3):
        lanes("jobs", url, "add", "done", "ok" if i else "bad", "{}")
    subprocess.run([lanes_bin, "worker", url, "done", "--exit-when-empty", "--metrics-points",
                    "60", "--exec", "sh", "-c", 'test "$LANES_JOB_NAME" = ok'], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)
    # A worker on the paused queue (it takes nothing, the counts stay).
    worker = subprocess.Popen([lanes_bin, "worker", url, ODD, "--exec", "true"],
                              stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 10
        while json.loads(lanes("jobs", url, "workers", ODD, "--json")) == []:
            check(time.time() < deadline, "the worker is not listed")
            time.sleep(0.05)
        text = run_.with_dash([], scrape)
    finally:
        worker.terminate()
        worker.wait(timeout=20)
    families = {f.name: f for f in text_string_to_metric_families(text)}
    for name in ("lanes_jobs", "lanes_queue_paused", "lanes_queues", "lanes_store_up"):
        check(name in families and families[name].type == "gauge", name)
    got = {}
    for s in families["lanes_jobs"].samples:
        got[(s.labels["queue"], s.labels["state"])] = s.value
    for q in ("mail", ODD, "done"):
        want = json.loads(lanes("jobs", url, "counts", q, "--json"))
        for state, n in want.items():
            check(got.get((q, state)) == n, (q, state, got.get((q, state)), n))
    paused = {s.labels["queue"]: s.value for s in families["lanes_queue_paused"].samples}
    check(paused == {"mail": 0, ODD: 1, "done": 0}, paused)
    check(families["lanes_queues"].samples[0].value == 3)
    check_bullmq(families, text)
    workers = {s.labels["queue"]: s.value for s in families["lanes_workers"].samples}
    check(families["lanes_workers"].type == "gauge" and workers == {"mail": 0, ODD: 1, "done": 0}, workers)
    info = families.get("lanes_build_info")
    check(info is not None and info.samples[0].labels.get("version", "").count(".") == 2
          and info.samples[0].labels.get("commit"), "lanes_build_info")
    oldest = {s.labels["queue"]: s.value
              for s in families["lanes_queue_oldest_waiting_seconds"].samples}
    check(families["lanes_queue_oldest_waiting_seconds"].type == "gauge"
          and set(oldest) == {"mail", ODD, "done"}, oldest)
    # mail and the paused queue have jobs waiting since before the worker
    # ran; done has none.
    check(oldest.get("mail", 0) > 0 and oldest.get(ODD, 0) > 0 and oldest.get("done") == 0,
          oldest)
    up = families["lanes_store_up"].samples[0]
    check(up.value == 1 and up.labels["store"] == store, up)
    run_.ok("%s: /metrics parses; %d samples agree with lanes jobs counts" % (store, len(got)))


run_.main(main)
