"""test_caps.py - counts of `lanes dash` that a cap cuts say so, on one
store (docs/dash.md): /metrics' lanes_queues_capped is 0 for a few queues
and 1 past LN_JOB_QUEUES_MAX (1000) queues, where lanes_queues stops at
1000; a flow's children_total_capped is false for a parent of 5 children
and true for one of more than 4 x LN_JOB_CHILDREN_MAX (40,000), in the
job's own children and in the tree; for one of 10,001 it is true on Redis
(which reads at most 10,000 per status) and false on SQLite (which reads
40,000 in all, so 10,001 is the true count). The big stores are built in bulk by
dash_bulk (tests/dash/dash_bulk.c).

    python3 test_caps.py sqlite|redis LANES_BIN DASH_BULK

Exit 77 = skipped (no prometheus_client, or redis without
LANES_TEST_REDIS_URL).
"""
import subprocess
import sys
import urllib.request

from dashutil import SKIP, Run, call

try:
    from prometheus_client.parser import text_string_to_metric_families
except ImportError:
    print("skipped [prometheus-client]: prometheus_client not found (Debian: python3-prometheus-client)")
    sys.exit(SKIP)

run_ = Run(sys.argv[1], sys.argv[2], "caps")
url, lanes, bulk_bin = run_.url, run_.lanes, sys.argv[3]

QUEUES_MAX = 1000  # LN_JOB_QUEUES_MAX
CHILDREN_MAX = 10000  # LN_JOB_CHILDREN_MAX


class Failed(Exception):
    pass


def check(cond, what, *detail):
    """Raises unless cond; else counts the check."""
    if not cond:
        raise Failed("%s: %r" % (what, detail))
    run_.ok(what)


def bulk(*args):
    r = subprocess.run([bulk_bin, url, *args], capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        raise Failed("dash_bulk %s: %s" % (" ".join(args), r.stderr))


def metrics(base):
    """{name: value} of the unlabeled samples of /metrics."""
    with urllib.request.urlopen(base + "/metrics", timeout=30) as r:
        text = r.read().decode()
    out = {}
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            if not s.labels:
                out[s.name] = s.value
    return out


def check_queues(base, count, capped):
    m = metrics(base)
    check(m.get("lanes_queues") == count and m.get("lanes_queues_capped") == capped,
          "/metrics: lanes_queues %d, lanes_queues_capped %d" % (count, capped),
          m.get("lanes_queues"), m.get("lanes_queues_capped"))


def check_flow(base, pid, total, capped):
    s, b = call(base, "/api/queues/pq/jobs/%s/flow" % pid)
    check(s == 200 and b["children_total"] == total and b["children_total_capped"] is capped,
          "flow of %s: children_total %d, children_total_capped %s" % (pid, total, capped),
          s, b.get("children_total"), b.get("children_total_capped"))
    top = b["tree"]
    check(top["children_total"] == total and top["children_total_capped"] is capped,
          "flow of %s: the tree's top says the same" % pid,
          top.get("children_total"), top.get("children_total_capped"))


def main():
    bulk("children", "pq", "small", "5")
    run_.with_dash([], lambda base: check_queues(base, 1, 0))
    bulk("queues", str(QUEUES_MAX + 1))
    bulk("children", "pq", "mid", str(CHILDREN_MAX + 1))
    bulk("children", "pq", "big", str(4 * CHILDREN_MAX + 1))
    redis = run_.store == "redis"

    def big(base):
        check_queues(base, QUEUES_MAX, 1)
        check_flow(base, "small", 5, False)
        check_flow(base, "mid", CHILDREN_MAX if redis else CHILDREN_MAX + 1, redis)
        check_flow(base, "big", CHILDREN_MAX if redis else 4 * CHILDREN_MAX, True)

    run_.with_dash([], big)
    m = run_.with_dash(["--queue", "pq"], metrics)
    check(m.get("lanes_queues") == 1 and m.get("lanes_queues_capped") == 0,
          "--queue's list is never capped", m)


run_.main(main)
