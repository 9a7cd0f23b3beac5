#!/usr/bin/env python3
"""test-skips.py JUNIT - what did not run in a CTest run, and whether that
was allowed: exit 1 when a test or a case skipped for a reason that
LANES_ALLOW_SKIP does not name, else 0.

JUNIT is the file of `ctest --output-junit` (scripts/run-tests.sh writes
it). A skip is either a test CTest marks skipped (exit 77, SKIP_RETURN_CODE)
or a line "skipped [REASON]: MESSAGE" in a test's output: a test program
whose other cases ran prints one per skipped case, and a test that skips
says why with one. A skipped test that printed no such line has the reason
"unknown", which no LANES_ALLOW_SKIP allows. The reasons are listed in
docs/build.md ("Skipped tests"); LANES_ALLOW_SKIP names those expected,
separated by commas or spaces (e.g. LANES_ALLOW_SKIP=disk-full).
"""
import os
import re
import sys
import xml.etree.ElementTree as ET

# docs/build.md, "Skipped tests": keep the two in step.
REASONS = {
    "redis": "no Redis server (LANES_TEST_REDIS_URL not set)",
    "redis-cluster": "no local Redis Cluster (LANES_TEST_REDIS_CLUSTER_URL not set)",
    "postgres": "no PostgreSQL server (LANES_TEST_PG_URL not set)",
    "node": "node or its npm packages (scripts/install-deps.sh) missing",
    "chromium": "no chromium for the dashboard's browser test",
    "cli": "the lanes CLI is not in this build",
    "disk-full": "a small tmpfs for the full-disk cases needs root and a mount namespace",
    "read-only-dir": "root cannot mount a read-only tmpfs",
    "valgrind": "valgrind not installed",
    "clang-format": "clang-format not installed",
    "fuzz": "the fuzz targets were not built (clang with libFuzzer)",
    "curl": "curl not installed",
    "wrk": "wrk not installed",
    "python3": "python3 not installed",
    "prometheus-client": "python3-prometheus-client not installed",
    "systemd": "systemd-analyze not installed (the deploy/ units are not verified)",
    "install": "the install test cannot run here (a tool missing, an absolute libdir)",
}

LINE = re.compile(r"skipped \[([A-Za-z0-9_.+-]+)\]: ?(.*)")


def skips_of(case):
    """[(reason, message)] of one <testcase>."""
    out = "".join(e.text or "" for e in case.iter("system-out"))
    found = [(m.group(1), m.group(2).strip()) for m in LINE.finditer(out)]
    if case.find("skipped") is not None and not found:
        last = [l for l in out.splitlines() if l.strip()]
        found = [("unknown", last[-1].strip() if last else "no output")]
    return found


def main():
    if len(sys.argv) != 2:
        print("usage: test-skips.py JUNIT", file=sys.stderr)
        return 2
    try:
        root = ET.parse(sys.argv[1]).getroot()
    except (OSError, ET.ParseError) as e:
        print("test-skips.py: cannot read %s: %s" % (sys.argv[1], e), file=sys.stderr)
        return 1
    allowed = set(re.split(r"[,\s]+", os.environ.get("LANES_ALLOW_SKIP", "").strip())) - {""}
    for name in sorted(allowed - set(REASONS)):
        print("test-skips.py: LANES_ALLOW_SKIP names %r, not a skip reason (docs/build.md): "
              "it allows nothing" % name)
    allowed &= set(REASONS)  # 'unknown' (a skip that gave no reason) is never allowed
    bad, ok = [], []
    for case in root.iter("testcase"):
        for reason, msg in skips_of(case):
            (ok if reason in allowed else bad).append((case.get("name"), reason, msg))
    for what, rows in (("allowed by LANES_ALLOW_SKIP", ok), ("NOT ALLOWED", bad)):
        if not rows:
            continue
        print("\nSkipped, %s (%d):" % (what, len(rows)))
        for name, reason, msg in rows:
            print("  %-44s [%s] %s" % (name, reason, msg))
    if not bad:
        if not ok:
            print("\nNothing skipped: every test ran.")
        return 0
    reasons = sorted({r for _, r, _ in bad})
    print("\nThe run is not complete: %d skip(s) for %s." % (len(bad), ", ".join(reasons)))
    for r in reasons:
        print("  %-16s %s" % (r, REASONS.get(r, "a skip that gave no reason: fix the test")))
    print("Install what is missing (scripts/install-deps.sh), or accept these skips with\n"
          "LANES_ALLOW_SKIP=%s (docs/build.md, 'Skipped tests')." %
          ",".join(r for r in reasons if r != "unknown"))
    return 1


if __name__ == "__main__":
    sys.exit(main())
