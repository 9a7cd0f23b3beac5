#!/usr/bin/env python3
"""The handler bench/tools/persist-vs-exec.sh measures, one for both modes:
under `--exec` (LANES_JOB_ID set) it reads one job's data on stdin and
prints the result; under `--exec-persistent` it serves jobs with
examples/handlers/python/lanes_handler.py. The work is the same tiny one."""
import json
import os
import sys


def work(data):
    return {"double": (data or {}).get("i", 0) * 2}


if os.environ.get("LANES_JOB_ID"):
    print(json.dumps(work(json.load(sys.stdin))))
else:
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, os.path.join(here, "..", "..", "examples", "handlers", "python"))
    import lanes_handler

    lanes_handler.run(lambda job: work(job.data))
