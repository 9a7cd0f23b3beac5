"""test_metrics.py - /metrics of `lanes dash` read by a real Prometheus
text parser (Debian's python3-prometheus-client), on one store.

    python3 test_metrics.py sqlite|redis LANES_BIN

Fills two queues (one paused, one named with the characters the format
escapes), starts `lanes dash` on a free port, and checks that every
lanes_jobs sample equals what `lanes jobs counts` says, that the paused
flag, lanes_workers (a running `lanes worker`) and lanes_store_up are
right, and that the exposition parses. Exit 77 = skipped (no prometheus_client, or redis without LANES_TEST_REDIS_URL).
"""
import json
import subprocess
import sys
import time
import urllib.request

from dashutil import SKIP, Run

try:
    from prometheus_client.parser import text_string_to_metric_families
except ImportError:
    print("prometheus_client not found (Debian: python3-prometheus-client): skipped")
    sys.exit(SKIP)

run_ = Run(sys.argv[1], sys.argv[2], "metrics")
store, url, lanes_bin, lanes = run_.store, run_.url, run_.lanes_bin, run_.lanes

ODD = 'we"ird\\q'  # a queue name with the characters label values escape


def scrape(base):
    with urllib.request.urlopen(base + "/metrics", timeout=10) as r:
        ctype = r.headers.get("Content-Type", "")
        assert ctype.startswith("text/plain; version=0.0.4"), ctype
        return r.read().decode("utf-8")


def main():
    for i in range(3):
        lanes("jobs", url, "add", "mail", "send", '{"i":%d}' % i)
    lanes("jobs", url, "add", "mail", "later", "{}", "--delay", "3600000")
    lanes("jobs", url, "add", ODD, "x", "{}", "--priority", "2")
    lanes("jobs", url, "pause", ODD)
    # A worker on the paused queue (it takes nothing, the counts stay).
    worker = subprocess.Popen([lanes_bin, "worker", url, ODD, "--exec", "true"],
                              stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 10
        while json.loads(lanes("jobs", url, "workers", ODD, "--json")) == []:
            assert time.time() < deadline, "the worker is not listed"
            time.sleep(0.05)
        text = run_.with_dash([], scrape)
    finally:
        worker.terminate()
        worker.wait(timeout=20)
    families = {f.name: f for f in text_string_to_metric_families(text)}
    for name in ("lanes_jobs", "lanes_queue_paused", "lanes_queues", "lanes_store_up"):
        assert name in families and families[name].type == "gauge", name
    got = {}
    for s in families["lanes_jobs"].samples:
        got[(s.labels["queue"], s.labels["state"])] = s.value
    for q in ("mail", ODD):
        want = json.loads(lanes("jobs", url, "counts", q, "--json"))
        for state, n in want.items():
            assert got.get((q, state)) == n, (q, state, got.get((q, state)), n)
    paused = {s.labels["queue"]: s.value for s in families["lanes_queue_paused"].samples}
    assert paused == {"mail": 0, ODD: 1}, paused
    assert families["lanes_queues"].samples[0].value == 2
    workers = {s.labels["queue"]: s.value for s in families["lanes_workers"].samples}
    assert families["lanes_workers"].type == "gauge" and workers == {"mail": 0, ODD: 1}, workers
    up = families["lanes_store_up"].samples[0]
    assert up.value == 1 and up.labels["store"] == store, up
    run_.ok("%s: /metrics parses; %d samples agree with lanes jobs counts" % (store, len(got)))


run_.main(main)
