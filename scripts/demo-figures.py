#!/usr/bin/env python3
"""demo-figures.py pool|figures DIR - the parts of `make demo` (scripts/demo.sh)
read from the JSON that `lanes bench` wrote into DIR: `pool` prints the E4
read beside CPU work, `figures` each experiment's headline figure with one
line on how to read it. A missing or unreadable file prints one line saying
so; the exit status is 0 either way (the demo goes on)."""
import json
import os
import sys

# One line each: what a ratio above or below 1 means for that experiment.
READ = {
    "fixedqueue": "> 1x: Piscina's FixedQueue beats its old ArrayTaskQueue (the seed said up to 6x)",
    "rails": "> 1x: a rail refilled as soon as it frees beats chunks of 50 (the seed: 1.49x)",
    "writepath": "> 1x: answering first and writing later serves more requests/s (the seed: 4.03x)",
    "starvation": "> 1x: Node needs a 5th libuv thread to free the read; lanes has its I/O lane (above)",
    "jobs": "> 1x: the SQLite store runs more jobs/s end to end than the target of 20,000",
    "bullmq": "> 1x: the C worker runs more jobs/s than BullMQ's Node worker (target: 3x)",
}
LABEL = {
    "fixedqueue": "Piscina FixedQueue vs ArrayTaskQueue, 1 thread",
    "rails": "rolling vs chunked, 50 at a time (Node PromisePool)",
    "writepath": "HTTP service: answer first vs write first, req/s",
    "starvation": "Node.js read under 4 hashes, 5 vs 4 libuv threads",
    "jobs": "SQLite store, jobs/s end to end vs the 20,000 target",
    "bullmq": "C worker vs BullMQ's worker on one Redis, jobs/s",
}
ORDER = ["fixedqueue", "rails", "writepath", "starvation", "jobs", "bullmq"]


def load(d, slug):
    try:
        with open(os.path.join(d, slug + ".json"), encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def med(doc, key):
    s = doc.get("summary", {}).get(key)
    return s.get("median") if isinstance(s, dict) else None


def ms(v):
    return "-" if v is None else ("%.0f ms" % v if v >= 100 else "%.2f ms" % v)


def pool(d):
    doc = load(d, "starvation")
    if doc is None:
        print("  (no starvation.json in %s: see the log)" % d)
        return
    io, cpu = med(doc, "lanesReadUnder4Ms"), med(doc, "oneLaneReadUnder4Ms")
    print("  One small file read while 4 PBKDF2 hashes keep the CPU lane busy:")
    print("    read on its own I/O lane:           %9s  (the read alone: %s)"
          % (ms(io), ms(med(doc, "lanesReadAloneMs"))))
    print("    the same read on the CPU lane:      %9s  (it waits for the hashes)" % ms(cpu))
    node = med(doc, "nodeUv4ReadUnder4Ms")
    if node is not None:
        print("    Node.js, libuv's 4 threads:         %9s" % ms(node))


def ratio(r):
    if not isinstance(r, (int, float)):
        return "-"
    return "%.0fx" % r if r >= 1000 else "%.1fx" % r if r >= 10 else "%.2fx" % r


def verdict(c):
    d = c.get("direction", "")
    need = c.get("publishedRatio") if c.get("kind") == "target" else None
    r = c.get("ratio")
    if d == "target missed" and need and isinstance(r, (int, float)):
        return "below the %s target: %.0f%% of it" % (ratio(need), r / need * 100)
    return {"same": "as in the seed", "opposite": "OPPOSITE to the seed",
            "mixed": "repeats disagree", "target met": "meets the target",
            "target better": "met", "baseline better": "first slower"}.get(d, d)


def figures(d):
    for slug in ORDER:
        doc = load(d, slug)
        if doc is None:
            print("  %-11s not run (see the log)" % slug)
            continue
        heads = [c for c in doc.get("comparisons", []) if c.get("headline")]
        c = heads[0] if heads else (doc.get("comparisons") or [{}])[0]
        print("  %-11s %-6s %s: %s" % (slug, ratio(c.get("ratio")), LABEL[slug], verdict(c)))
        peer = doc.get("peer")
        ran = not isinstance(peer, dict) or peer.get("status") == "ran"
        only = "" if ran else " (Node.js peer not run)"
        print("  %-11s %s%s" % ("", READ.get(slug, ""), only))


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("pool", "figures"):
        print("usage: demo-figures.py pool|figures DIR", file=sys.stderr)
        return 2
    (pool if sys.argv[1] == "pool" else figures)(sys.argv[2])
    return 0


if __name__ == "__main__":
    sys.exit(main())
