"""slow.py - the slowloris clients of tests/writepath/test_writepath.sh
(python3, raw sockets; 127.0.0.1 only).

  slow.py hold PORT N SECS K   N connections trickle a request head (a
      byte each per second) for SECS s after the last connected; from
      1 s after that, K normal requests, one every 0.3 s, must each
      answer 201 within 5 s, and at least half of the N must still be
      open (held) at the end.
  slow.py deadline PORT N LIMIT HEAD|BODY   N connections trickle a head
      (or, after a whole head, a body) a byte every 0.3 s: each must get
      408 and be closed within LIMIT s of its connect.
  slow.py idle PORT K   K keep-alive connections each get a 201 and stay
      idle; a new connection's request must answer 201 within 2 s, and
      one of the K be closed.
Prints what it saw; exit 0 when it held, 1 with the reason."""
import resource, select, socket, sys, threading, time
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
if soft != resource.RLIM_INFINITY and soft < 4096:
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(4096, hard), hard))
mode, port = sys.argv[1], int(sys.argv[2])
BODY = b'{"post_id":1,"user_id":5,"body":"x"}'
REQ = b"POST /comment HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s" % (len(BODY), BODY)

def status_of(data):
    return int(data.split(b" ", 2)[1]) if data.startswith(b"HTTP/1.1 ") else 0

def request(s, timeout):  # (seconds, status) of one request on s
    t = time.time()
    s.settimeout(timeout)
    data = b""
    try:
        s.sendall(REQ)
        while b"\r\n\r\n" not in data:
            b = s.recv(4096)
            if not b:
                break
            data += b
        if b"\r\n\r\n" in data:  # the whole answer, so the connection may stay open
            head, rest = data.split(b"\r\n\r\n", 1)
            n = int([l.split(b":")[1] for l in head.split(b"\r\n") if l.lower().startswith(b"content-length:")][0])
            while len(rest) < n:
                rest += s.recv(4096)
    except (OSError, IndexError, ValueError):
        pass
    return time.time() - t, status_of(data)

def normal(k, out):
    for _ in range(k):
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=5)
            out.append(request(s, 5))
            s.close()
        except OSError as e:
            out.append((5.0, 0))
        time.sleep(0.3)

def trickle(n, secs, every, head_only, connected=None):
    """n connections trickling for secs s (from the last connect; then
    connected() is called); returns (conns, closed_after, statuses)."""
    prefix = b"POST /comment HTTP/1.1\r\nHost: x\r\n" + (b"X-Slow: " if head_only else b"Content-Length: 1000\r\n\r\n")
    conns, t0 = [], []
    for _ in range(n):
        s = socket.create_connection(("127.0.0.1", port), timeout=10)
        s.setblocking(False)
        s.send(prefix)
        conns.append(s)
        t0.append(time.time())
    if connected:
        connected()
    closed, status, end, last = {}, {}, time.time() + secs, 0
    while time.time() < end and len(closed) < n:
        if time.time() - last >= every:
            last = time.time()
            for i, s in enumerate(conns):
                if i not in closed:
                    try:
                        s.send(b"a")
                    except OSError:
                        pass
        open_ = [s for i, s in enumerate(conns) if i not in closed]
        r, _, _ = select.select(open_, [], [], 0.05) if open_ else ([], [], [])
        for s in r:
            i = conns.index(s)
            try:
                b = s.recv(65536)
            except OSError:
                b = b""
            if b and i not in status:
                status[i] = status_of(b)
            if not b:
                closed[i] = time.time() - t0[i]
    return conns, closed, status

if mode == "hold":
    n, secs, k = int(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
    out = []
    def later():
        time.sleep(1)  # the service has taken the trickling connections in
        normal(k, out)
    th = threading.Thread(target=later)
    conns, closed, status = trickle(n, secs, 1.0, True, th.start)
    th.join()
    held = n - len(closed)
    print("held %d of %d trickling connections; normal requests (s, status): %s" % (held, n, ", ".join("%.2f %d" % o for o in out)))
    if held < n // 2:
        sys.exit("FAIL: the trickling connections were not held")
    bad = [o for o in out if o[1] != 201 or o[0] > 5]
    sys.exit("FAIL: %d of %d normal requests not answered 201 within 5 s" % (len(bad), k) if bad or len(out) != k else 0)
elif mode == "deadline":
    n, limit, what = int(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
    conns, closed, status = trickle(n, limit + 4, 0.3, what == "HEAD")
    print("%s: %d of %d closed, after %s s; statuses %s" % (what, len(closed), n, ", ".join("%.1f" % v for v in sorted(closed.values())), sorted(set(status.values()))))
    late = [v for v in closed.values() if v > limit]
    if len(closed) < n or late:
        sys.exit("FAIL: %d connections still trickling after %.0f s, %d closed late" % (n - len(closed), limit + 4, len(late)))
    if set(status.values()) != {408}:
        sys.exit("FAIL: not every connection got 408")
elif mode == "idle":
    k = int(sys.argv[3])
    idle = []
    for _ in range(k):
        s = socket.create_connection(("127.0.0.1", port), timeout=5)
        secs, st = request(s, 5)
        if st != 201:
            sys.exit("FAIL: keep-alive request %d: %d" % (len(idle), st))
        idle.append(s)
    time.sleep(0.2)
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    secs, st = request(s, 5)
    r, _, _ = select.select(idle, [], [], 2)
    gone = sum(1 for c in r if c.recv(4096) == b"")
    print("%d idle keep-alive connections at the limit: a new request %d in %.2f s; %d idle closed" % (k, st, secs, gone))
    if st != 201 or secs > 2:
        sys.exit("FAIL: the new request was not served in place of an idle connection")
    if gone < 1:
        sys.exit("FAIL: no idle connection was closed")
