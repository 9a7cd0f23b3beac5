#!/usr/bin/env python3
"""test_healthz.py - a store that goes down and comes back (docs/deploy.md).

    test_healthz.py PATH/TO/lanes

On a private redis-server (a free loopback port, a password) that the test
stops and starts again:
  - `lanes dash` answers GET /healthz 200 {"status":"up"} with Redis up and
    503 {"status":"down"} with it down, says both on stderr, and is back to
    200 once Redis is;
  - a `lanes worker` started before Redis (URL from LANES_STORE, password
    from LANES_REDIS_PASSWORD_FILE) waits for it, says so, and runs the job
    added once Redis is up; its /healthz on --metrics is 200, 503 while it
    has lost Redis, and 200 again;
  - with --fail-fast the worker exits 3 at once instead.
Every wait polls with a bound; no time is asserted.
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

failures = []
BOUND_S = 30  # the longest any poll waits


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, file=sys.stderr)
    return cond


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Redis:
    def __init__(self, tmp, password):
        self.port = free_port()
        self.tmp = tmp
        self.password = password
        self.proc = None

    def start(self):
        self.proc = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--requirepass", self.password, "--dir", self.tmp],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + BOUND_S
        while time.time() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("redis-server did not start")

    def stop(self):
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(timeout=BOUND_S)
            self.proc = None


class Lines:
    """A process's stderr, read line by line on a thread of its own."""

    def __init__(self, proc):
        self.lines = []
        self.lock = threading.Lock()
        self.th = threading.Thread(target=self._read, args=(proc.stderr,), daemon=True)
        self.th.start()

    def _read(self, f):
        for line in f:
            with self.lock:
                self.lines.append(line.rstrip("\n"))

    def wait_for(self, pred, what):
        deadline = time.time() + BOUND_S
        while time.time() < deadline:
            with self.lock:
                for line in self.lines:
                    if pred(line):
                        return line
            time.sleep(0.05)
        check(False, what)
        with self.lock:
            print("\n".join(self.lines), file=sys.stderr)
        return None


def get(url):
    """(status, JSON body) of GET url."""
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.status, json.loads(r.read().decode())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read().decode() or "null")
    except (urllib.error.URLError, OSError, ValueError):
        return None, None


def wait_status(url, want, what):
    deadline = time.time() + BOUND_S
    got = None
    while time.time() < deadline:
        got = get(url)
        if got[0] == want:
            return got[1]
        time.sleep(0.1)
    check(False, "%s (last: %r)" % (what, got))
    return None


def dash_case(binary, redis, url):
    redis.start()
    d = subprocess.Popen([binary, "dash", url, "--listen", "127.0.0.1:0"],
                         stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    out = Lines(d)
    try:
        line = out.wait_for(lambda l: "serving" in l, "the dashboard's start line")
        if line is None:
            return
        base = line.split(" on ")[1].split(" ")[0].rstrip("/")
        body = wait_status(base + "/healthz", 200, "dash /healthz is 200 with Redis up")
        check(body is not None and body.get("status") == "up", "dash /healthz says up")
        check("s3cret" not in line, "the password is not in the start line")
        redis.stop()
        body = wait_status(base + "/healthz", 503, "dash /healthz is 503 with Redis down")
        check(body is not None and body.get("status") == "down", "dash /healthz says down")
        out.wait_for(lambda l: "does not answer" in l, "the dashboard says the store is down")
        redis.start()
        body = wait_status(base + "/healthz", 200, "dash /healthz is 200 once Redis is back")
        out.wait_for(lambda l: "answers again" in l, "the dashboard says the store is back")
    finally:
        d.send_signal(signal.SIGTERM)
        check(d.wait(timeout=BOUND_S) == 0, "the dashboard stops on SIGTERM, exit 0")
        redis.stop()


def worker_case(binary, redis, tmp, url, pwfile):
    marker = os.path.join(tmp, "ran")
    env = dict(os.environ, LANES_STORE="redis://127.0.0.1:%d/" % redis.port,
               LANES_REDIS_PASSWORD_FILE=pwfile)
    # Redis is down: the worker, given only QUEUE, waits for it.
    w = subprocess.Popen([binary, "worker", "q", "--log-format", "json", "--metrics", "0",
                          "--poll", "20", "--store-retry", "600000", "--exec", "/bin/sh", "-c",
                          'cat > "$1"', "sh", marker],
                         env=env, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    out = Lines(w)
    try:
        wait = out.wait_for(lambda l: '"store_wait"' in l, "the worker says it waits for the store")
        if wait is not None:
            check(json.loads(wait).get("queue") == "q", "the wait line names the queue")
        check(w.poll() is None, "the worker waits rather than exit")
        redis.start()
        out.wait_for(lambda l: '"store_up"' in l, "the worker says the store is up")
        start = out.wait_for(lambda l: '"event":"start"' in l, "the worker's start line")
        r = subprocess.run([binary, "jobs", url, "add", "q", "j", '{"n":7}'],
                           capture_output=True, text=True, timeout=BOUND_S)
        check(r.returncode == 0, "jobs add with ?password_file= works: " + r.stderr)
        deadline = time.time() + BOUND_S
        while time.time() < deadline and not os.path.exists(marker):
            time.sleep(0.05)
        check(os.path.exists(marker), "the worker ran the job once Redis came up")
        if start is None:
            return
        health = json.loads(start)["metrics"].replace("/metrics", "/healthz")
        body = wait_status(health, 200, "worker /healthz is 200 with its store")
        check(body is not None and body.get("status") == "up", "worker /healthz says up")
        redis.stop()
        wait_status(health, 503, "worker /healthz is 503 once it lost its store")
        redis.start()
        wait_status(health, 200, "worker /healthz is 200 once the store is back")
    finally:
        w.send_signal(signal.SIGTERM)
        check(w.wait(timeout=BOUND_S) == 0, "the worker stops on SIGTERM, exit 0")
        redis.stop()
    # --fail-fast: no wait.
    r = subprocess.run([binary, "worker", "q", "--fail-fast", "--exec", "/bin/true"], env=env,
                       capture_output=True, text=True, timeout=BOUND_S)
    check(r.returncode == 3, "--fail-fast exits 3 with Redis down (got %d)" % r.returncode)
    check("LN_ECONNREFUSED" in r.stderr, "--fail-fast says why: " + r.stderr)


def main():
    binary = sys.argv[1]
    if shutil.which("redis-server") is None:
        print("skipped [redis]: redis-server is not installed")
        return 77
    tmp = tempfile.mkdtemp(prefix="lanes-healthz-")
    pwfile = os.path.join(tmp, "redis-password")
    with open(pwfile, "w") as f:
        f.write("s3cret pass/word\n")  # a blank and a slash: percent-encoded
    redis = Redis(tmp, "s3cret pass/word")
    url = "redis://127.0.0.1:%d/?password_file=%s" % (redis.port, pwfile)
    try:
        dash_case(binary, redis, url)
        worker_case(binary, redis, tmp, url, pwfile)
    finally:
        redis.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    if failures:
        print("%d failure(s)" % len(failures), file=sys.stderr)
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
