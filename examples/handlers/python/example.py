#!/usr/bin/env python3
"""An example handler: sums data["numbers"], reporting progress and a log
line. Run it with:

    lanes worker sqlite:lanes.db sums --concurrency 4 \
        --exec-persistent python3 examples/handlers/python/example.py
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lanes_handler  # noqa: E402


def handle(job):
    numbers = (job.data or {}).get("numbers")
    if not isinstance(numbers, list):
        raise lanes_handler.Unrecoverable("data has no list \"numbers\"")
    job.log("summing %d numbers" % len(numbers))
    job.progress(50)
    return {"sum": sum(numbers)}


lanes_handler.run(handle)
