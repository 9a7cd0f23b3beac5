"""dashutil.py - what the Python tests of `lanes dash` share: the store URL
of a run (a fresh SQLite file, or a Redis prefix of its own), the `lanes`
command, a dashboard on a free loopback port, a request to its JSON API
and the check of its answer, the count of checks passed, and the cleanup.

    from dashutil import Run, call, check
    run = Run(sys.argv[1], sys.argv[2], "api")   # exits 77 when skipped
    run.with_dash(["--read-only"], lambda base: run.expect(call(base, "/api/queues"), 200))
    run.main(main)   # main(), then "<store>: N passed, 0 failed"; cleans up
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

SKIP = 77


class CheckFailed(Exception):
    """A check of a test that did not hold."""


def check(cond, *what):
    """Raises CheckFailed unless cond; what (any values) goes in the message.
    Not `assert`: python -O (PYTHONOPTIMIZE) drops assert statements, and
    with them every check of the test."""
    if not cond:
        raise CheckFailed("check failed" + (": " + ", ".join(repr(w) for w in what) if what else ""))


def check_eq(got, want, what=""):
    """Raises CheckFailed unless got == want, naming both."""
    if got != want:
        raise CheckFailed("%s: got %r, want %r" % (what or "check_eq", got, want))


def call(base, path, method="GET", headers=None, body=None):
    """(status, parsed JSON body) of one request; an error's body must be JSON."""
    data = body.encode() if isinstance(body, str) else body
    req = urllib.request.Request(base + path, method=method, headers=headers or {}, data=data)
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        raw = e.read()
        check(e.headers.get("Content-Type") == "application/json", (path, e.headers))
        return e.code, json.loads(raw)


class Run:
    """One test run on one store ('sqlite' or 'redis')."""

    def __init__(self, store, lanes_bin, tag):
        self.store, self.lanes_bin = store, lanes_bin
        self.checks = 0
        self.tmp = tempfile.mkdtemp(prefix="lanes-dash-%s-" % tag)
        self.prefix = None
        if store == "sqlite":
            self.url = "sqlite:" + os.path.join(self.tmp, tag + ".db")
            return
        base = os.environ.get("LANES_TEST_REDIS_URL", "")
        if not base:
            shutil.rmtree(self.tmp, ignore_errors=True)
            print("skipped [redis]: LANES_TEST_REDIS_URL not set")
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

    def with_dash(self, opts, fn):
        """fn(base URL) with `lanes dash OPTS` running; what fn returns."""
        p, base = self.start_dash(*opts)
        try:
            return fn(base)
        finally:
            self.stop_dash(p)

    def ok(self, what):
        """Counts a check passed and says so."""
        self.checks += 1
        print("ok   " + what)

    def expect(self, got, status, code=None, what=""):
        """A call()'s answer has this status and, given one, this error code;
        its body."""
        s, body = got
        check(s == status, (what, s, body))
        if code is not None:
            check(body["error"]["code"] == code, (what, body))
        self.ok("%s -> %d%s" % (what, status, " " + code if code else ""))
        return body

    def main(self, fn):
        """Runs fn, says how many checks passed, and cleans up after it."""
        try:
            fn()
            print("%s: %d passed, 0 failed" % (self.store, self.checks))
        finally:
            self.cleanup()

    def cleanup(self):
        """Removes the run's files, and its keys on Redis."""
        shutil.rmtree(self.tmp, ignore_errors=True)
        if self.prefix is None:
            return
        subprocess.run(["redis-cli", "-u", os.environ["LANES_TEST_REDIS_URL"].split("?")[0],
                        "EVAL", "for _, k in ipairs(redis.call('KEYS', ARGV[1])) do "
                        "redis.call('DEL', k) end", "0", self.prefix + ":*"],
                       capture_output=True, timeout=10)
