"""dashutil.py - what the Python tests of `lanes dash` share: the store URL
of a run (a fresh SQLite file, or a Redis prefix of its own), the `lanes`
command, a dashboard on a free loopback port, and the cleanup.

    from dashutil import Run
    run = Run(sys.argv[1], sys.argv[2], "api")   # exits 77 when skipped
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

SKIP = 77


class Run:
    """One test run on one store ('sqlite' or 'redis')."""

    def __init__(self, store, lanes_bin, tag):
        self.store, self.lanes_bin = store, lanes_bin
        self.tmp = tempfile.mkdtemp(prefix="lanes-dash-%s-" % tag)
        self.prefix = None
        if store == "sqlite":
            self.url = "sqlite:" + os.path.join(self.tmp, tag + ".db")
            return
        base = os.environ.get("LANES_TEST_REDIS_URL", "")
        if not base:
            shutil.rmtree(self.tmp, ignore_errors=True)
            print("LANES_TEST_REDIS_URL not set: skipped")
            sys.exit(SKIP)
        self.prefix = "ldash%s%d" % (tag, os.getpid())
        self.url = base + ("&" if "?" in base else "?") + "prefix=" + self.prefix

    def lanes(self, *args):
        """stdout of a `lanes` command that must succeed."""
        r = subprocess.run([self.lanes_bin, *args], capture_output=True, text=True, timeout=30)
        if r.returncode != 0:
            raise SystemExit("lanes %s: %s" % (" ".join(args), r.stderr))
        return r.stdout

    def start_dash(self, *opts):
        """(process, base URL) of `lanes dash` on a free loopback port."""
        p = subprocess.Popen([self.lanes_bin, "dash", self.url, "--listen", "127.0.0.1:0", *opts],
                             stderr=subprocess.PIPE, text=True)
        deadline = time.time() + 10
        line = ""
        while time.time() < deadline:
            line = p.stderr.readline()
            m = re.search(r"on (http://127\.0\.0\.1:\d+)/", line)
            if m:
                return p, m.group(1)
            if p.poll() is not None:
                break
        p.kill()
        raise SystemExit("lanes dash did not start: " + line)

    @staticmethod
    def stop_dash(p):
        p.terminate()
        p.wait(timeout=10)

    def cleanup(self):
        """Removes the run's files, and its keys on Redis."""
        shutil.rmtree(self.tmp, ignore_errors=True)
        if self.prefix is None:
            return
        subprocess.run(["redis-cli", "-u", os.environ["LANES_TEST_REDIS_URL"].split("?")[0],
                        "EVAL", "for _, k in ipairs(redis.call('KEYS', ARGV[1])) do "
                        "redis.call('DEL', k) end", "0", self.prefix + ":*"],
                       capture_output=True, timeout=10)
