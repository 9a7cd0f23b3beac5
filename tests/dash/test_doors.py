"""test_doors.py - the doors of `lanes dash` (docs/dash.md, "Access and
limits"), on one store:
 - the Host rule: a name that only starts with 127. (DNS rebinding), a
   wrong port, another 127.x, no port: 403 for the page, /api, /metrics and
   a write, before anything runs; 127.0.0.1, localhost, [::1] with the
   port pass; --allow-host NAME and NAME:PORT;
 - --token-file on loopback: writes need the token (X-Lanes-Dash is not
   enough), reads do not;
 - slow clients: a normal request is answered within 3 s while 200
   connections hold half a request head, and while 200 trickle a byte each
   second; --request-timeout closes a trickling connection (a deadline,
   not an idle timeout); a full server (--max-connections) answers 503 JSON
   at once, and closes an idle keep-alive connection first to serve a new
   one; with more stalled connections than it takes at all (100 for
   --max-connections 16), a normal request is still answered within 3 s;
   clients that pipeline requests and read no answer hold every slot only
   until the deadline: then a normal request is served;
 - request bodies: the bytes all bodies hold at once stop at twice
   --max-data-size (64 MiB at least); past it a request is 503 busy.
Every connection is to 127.0.0.1, each loop bounded.

    python3 test_doors.py sqlite|redis LANES_BIN

Exit 77 = skipped (redis without LANES_TEST_REDIS_URL).
"""
import http.client
import json
import os
import socket
import sys
import time

from dashutil import Run

run_ = Run(sys.argv[1], sys.argv[2], "doors")
url, tmp, lanes = run_.url, run_.tmp, run_.lanes

STALLED = 200  # the number of stalled connections
SERVED_WITHIN = 3.0  # seconds: the bound for a normal request


class Failed(Exception):
    pass


def check(cond, what, *detail):
    """Raises unless cond; else counts the check."""
    if not cond:
        raise Failed("%s: %r" % (what, detail))
    run_.ok(what)


def port_of(base):
    return int(base.rsplit(":", 1)[1])


def request(base, path, method="GET", headers=None, timeout=10):
    """(status, JSON body or None, headers) of one request on a connection
    of its own."""
    c = http.client.HTTPConnection("127.0.0.1", port_of(base), timeout=timeout)
    try:
        c.putrequest(method, path, skip_host=headers is not None and "Host" in headers)
        for k, v in (headers or {}).items():
            c.putheader(k, v)
        c.putheader("Content-Length", "0")
        c.endheaders()
        r = c.getresponse()
        raw = r.read()
        body = json.loads(raw) if r.getheader("Content-Type") == "application/json" else None
        return r.status, body, r
    finally:
        c.close()


def is_paused(base, q):
    s, body, _ = request(base, "/api/queues/" + q)
    check(s == 200, "GET /api/queues/" + q, s, body)
    return body["paused"]


def run_hosts(base):
    p = port_of(base)
    for host in ["127.0.0.1:%d" % p, "localhost:%d" % p, "LocalHost:%d" % p, "[::1]:%d" % p]:
        s, body, _ = request(base, "/api/queues", headers={"Host": host})
        check(s == 200, "Host %s is served" % host, s, body)
    bad = ["127.0.0.1.attacker.example:%d" % p, "127.0.0.1:%d" % (p + 1 if p < 65535 else 1),
           "127.0.0.2:%d" % p, "127.0.0.1", "localhost.:%d" % p, "evil.example:%d" % p,
           "127.0.0.1:%d:%d" % (p, p), "[::1]x:%d" % p]
    for host in bad:
        for path in ["/", "/api/queues", "/metrics"]:
            s, body, _ = request(base, path, headers={"Host": host})
            check(s == 403 and body["error"]["code"] == "bad_host",
                  "GET %s with Host %s -> 403 bad_host" % (path, host), s, body)
    # The attack: a write with the loopback header, from a page
    # whose name resolves to 127.0.0.1.
    h = {"Host": "127.0.0.1.attacker.example:%d" % p, "X-Lanes-Dash": "1"}
    s, body, _ = request(base, "/api/queues/q/pause", "POST", h)
    check(s == 403 and body["error"]["code"] == "bad_host", "rebinding pause -> 403", s, body)
    check(not is_paused(base, "q"), "the queue is not paused")
    s, body, _ = request(base, "/api/queues/q/pause", "POST", {"X-Lanes-Dash": "1"})
    check(s == 200, "the same pause with Host 127.0.0.1 -> 200", s, body)
    check(is_paused(base, "q"), "the queue is paused")
    lanes("jobs", url, "resume", "q")


def run_allowed(base):
    p = port_of(base)
    for host, status in [("dash.example:%d" % p, 200), ("DASH.example", 200),
                         ("dash.example:1", 200), ("px.example:8443", 200),
                         ("px.example:%d" % p, 403), ("other.example:%d" % p, 403),
                         ("localhost:%d" % p, 200)]:
        s, body, _ = request(base, "/api/queues", headers={"Host": host})
        check(s == status, "--allow-host: Host %s -> %d" % (host, status), s, body)


def run_token(base):
    w = "/api/queues/q/pause"
    s, body, _ = request(base, w, "POST")
    check(s == 401, "loopback with a token: a write without it -> 401", s, body)
    s, body, _ = request(base, w, "POST", {"X-Lanes-Dash": "1"})
    check(s == 401, "loopback with a token: X-Lanes-Dash is not the token -> 401", s, body)
    s, body, _ = request(base, w, "POST", {"Authorization": "Bearer wrong"})
    check(s == 401, "loopback with a token: a wrong token -> 401", s, body)
    check(not is_paused(base, "q"), "the queue is not paused (reads need no token)")
    s, body, _ = request(base, w, "POST", {"Authorization": "Bearer s3cret"})
    check(s == 200, "loopback with a token: the token -> 200", s, body)
    s, body, _ = request(base, "/api/queues/q/resume", "POST", {"X-Lanes-Token": "s3cret"})
    check(s == 200, "loopback with a token: X-Lanes-Token -> 200", s, body)


def open_stalled(base, n, head=None):
    """n connections that sent half a request head; the sockets."""
    p = port_of(base)
    head = head or ("GET /api/info HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nX-Slow: " % p).encode()
    socks = []
    for _ in range(n):
        s = socket.create_connection(("127.0.0.1", p), timeout=5)
        s.sendall(head)
        socks.append(s)
    return socks


def close_all(socks):
    for s in socks:
        s.close()


def served_in_time(base, what):
    t0 = time.monotonic()
    try:
        s, body, _ = request(base, "/api/info", timeout=SERVED_WITHIN + 2)
    except OSError as e:
        s, body = None, repr(e)
    took = time.monotonic() - t0
    check(s == 200 and took < SERVED_WITHIN,
          "%s: GET /api/info answered 200 within %.0f s" % (what, SERVED_WITHIN), s, took, body)


def run_stalled(base):
    socks = open_stalled(base, STALLED)
    try:
        served_in_time(base, "%d half-header connections held" % STALLED)
        served_in_time(base, "%d half-header connections held, again" % STALLED)
    finally:
        close_all(socks)
    socks = open_stalled(base, STALLED)
    try:
        for i in range(4):  # trickle one byte each second, 4 rounds
            for s in socks:
                try:
                    s.send(b"x")
                except OSError:
                    pass
            served_in_time(base, "%d trickling connections held, round %d" % (STALLED, i + 1))
            time.sleep(1)
    finally:
        close_all(socks)


def closed_by_server(s, within):
    """True if the server closes s (trickling a byte each 0.25 s) within
    `within` seconds."""
    end = time.monotonic() + within
    s.settimeout(0.25)
    while time.monotonic() < end:
        try:
            s.send(b"x")
            if s.recv(4096) == b"":
                return True
        except socket.timeout:
            continue
        except OSError:
            return True
    return False


def run_deadline(base):
    # --request-timeout 2: a trickling head is closed after about 2 s
    # although each byte comes well within any idle timeout.
    socks = open_stalled(base, 1)
    t0 = time.monotonic()
    closed = closed_by_server(socks[0], 15)
    took = time.monotonic() - t0
    close_all(socks)
    check(closed and took >= 1.0, "a trickling connection is closed by the deadline", closed, took)
    served_in_time(base, "after the deadline")


def full_once(base):
    """8 stalled heads, then one more request: (status, body, response,
    seconds it took, seconds from the first stalled head's opening to the
    answer: the stalled heads were at most that old when it was given)."""
    t_open = time.monotonic()
    socks = open_stalled(base, 8)
    try:
        t0 = time.monotonic()
        s, body, r = request(base, "/api/info", timeout=SERVED_WITHIN + 2)
        t1 = time.monotonic()
        return s, body, r, t1 - t0, t1 - t_open
    finally:
        close_all(socks)


def run_full(base):
    # --max-connections 8: 8 stalled heads younger than the 0.25 s after
    # which one may be closed to make room; one more is answered 503 JSON.
    # Only an answer given while every stalled head was younger than that
    # counts: on a machine too slow for it (the server may then rightly
    # close one and answer 200), it tries again (5 times).
    for _ in range(5):
        s, body, r, took, age = full_once(base)
        if s == 503 or age < 0.25:
            break
        end = time.monotonic() + 10
        while time.monotonic() < end and request(base, "/api/info")[0] != 200:
            time.sleep(0.1)
    check(s == 503 and body["error"]["code"] == "busy" and took < SERVED_WITHIN,
          "a full server answers 503 busy at once", s, body, took, age)
    check((r.getheader("Connection") or "").lower() == "close",
          "the 503 closes its connection", r.getheaders())
    end = time.monotonic() + 10
    s = None
    while time.monotonic() < end and s != 200:
        s, _, _ = request(base, "/api/info")
        time.sleep(0.1)
    check(s == 200, "served again once the stalled connections left", s)


def run_flood(base):
    # --max-connections 16: it takes 32 connections at most; 100 stalled
    # heads, and a normal request is answered within 3 s (the stalled ones
    # older than 0.25 s make room for it).
    socks = open_stalled(base, 100)
    try:
        served_in_time(base, "100 stalled connections, more than it takes")
    finally:
        close_all(socks)


def run_idle_first(base):
    # --max-connections 8: 8 keep-alive connections, each answered once and
    # idle; a ninth is served, and the one idle longest is closed for it.
    conns = []
    try:
        for _ in range(8):
            c = http.client.HTTPConnection("127.0.0.1", port_of(base), timeout=5)
            c.request("GET", "/api/info")
            r = c.getresponse()
            r.read()
            check(r.status == 200 and not r.will_close, "a keep-alive connection is served")
            conns.append(c)
            time.sleep(0.05)
        s, body, _ = request(base, "/api/info")
        check(s == 200, "a full server of idle connections serves one more", s, body)
        oldest = conns[0].sock
        oldest.settimeout(5)
        try:
            got = oldest.recv(1)
        except OSError:
            got = b""
        check(got == b"", "the connection idle longest was closed for it", got)
    finally:
        for c in conns:
            c.close()


BODY = 30 << 20  # bytes of each large edit: three of them pass 2 x 40 MiB


def open_slow_readers(base, n, requests=200):
    """n connections with a 1 KiB receive buffer, each pipelining
    `requests` GET /app.js and reading none of the answers; the sockets."""
    p = port_of(base)
    req = ("GET /app.js HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n" % p).encode()
    socks = []
    for _ in range(n):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
        s.settimeout(2)
        s.connect(("127.0.0.1", p))
        try:
            s.sendall(req * requests)
        except socket.timeout:
            pass  # the server stopped reading: its answers fill the buffers
        socks.append(s)
    return socks


def run_slow_readers(base):
    # --max-connections 4 --request-timeout 1: 4 clients that pipeline
    # requests and read no answer hold every slot; their answers have the
    # deadline too, so past it they make room and a normal request is
    # served (well before libmicrohttpd's 30 s idle timeout).
    socks = open_slow_readers(base, 4)
    try:
        t0 = time.monotonic()
        end = t0 + 15
        s = None
        while time.monotonic() < end and s != 200:
            try:
                s = request(base, "/api/info", timeout=5)[0]
            except OSError:
                s = None
            if s != 200:
                time.sleep(0.2)
        check(s == 200, "slow readers past the deadline make room for a request", s,
              time.monotonic() - t0)
    finally:
        close_all(socks)


def run_bodies(base):
    """Three 30 MiB edits held at once under --max-data-size 40 MiB: the
    bodies the dashboard keeps at once stop at 80 MiB, so the third is
    answered 503 busy while the first two are stored; afterwards the
    room is back and a fourth is stored."""
    lanes("jobs", url, "add", "big", "j", "{}", "--id", "b1")
    text = b'"' + b"x" * (BODY - 2) + b'"'
    conns = []
    for _ in range(3):
        c = http.client.HTTPConnection("127.0.0.1", port_of(base), timeout=30)
        c.putrequest("POST", "/api/queues/big/jobs/b1/data")
        c.putheader("X-Lanes-Dash", "1")
        c.putheader("Content-Type", "application/json")
        c.putheader("Content-Length", str(len(text)))
        c.endheaders()
        c.send(text[:-1])  # all but the last byte: the request stays open
        conns.append(c)
    statuses = []
    for c in conns:
        c.send(text[-1:])
        r = c.getresponse()
        body = json.loads(r.read())
        statuses.append((r.status, body.get("error", {}).get("code")))
        c.close()
    check(statuses[:2] == [(200, None), (200, None)], "two large bodies held at once are stored",
          statuses)
    check(statuses[2] == (503, "busy"), "the third, past the bodies' bound, is 503 busy", statuses)
    c = http.client.HTTPConnection("127.0.0.1", port_of(base), timeout=30)
    c.request("POST", "/api/queues/big/jobs/b1/data", text,
              {"X-Lanes-Dash": "1", "Content-Type": "application/json"})
    r = c.getresponse()
    r.read()
    c.close()
    check(r.status == 200, "once they are answered, a large body is stored again", r.status)


def main():
    lanes("jobs", url, "add", "q", "n", "{}")
    run_.with_dash([], run_hosts)
    run_.with_dash(["--allow-host", "dash.example", "--allow-host", "px.example:8443"],
                   run_allowed)
    token = os.path.join(tmp, "token")
    with open(token, "w") as f:
        f.write("s3cret\n")
    run_.with_dash(["--token-file", token], run_token)
    run_.with_dash([], run_stalled)
    run_.with_dash(["--request-timeout", "2"], run_deadline)
    run_.with_dash(["--max-connections", "8"], run_full)
    run_.with_dash(["--max-connections", "16"], run_flood)
    run_.with_dash(["--max-connections", "8", "--request-timeout", "60"], run_idle_first)
    run_.with_dash(["--max-data-size", str(40 << 20), "--request-timeout", "60"], run_bodies)
    run_.with_dash(["--max-connections", "4", "--request-timeout", "1"], run_slow_readers)


run_.main(main)
