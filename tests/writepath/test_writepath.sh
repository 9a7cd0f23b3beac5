#!/bin/sh
# test_writepath.sh CASE WRITEPATH WORKER LOAD_LUA - end-to-end tests of the
# write-path service (examples/writepath) over real HTTP. CASE is one of
# the cases listed in tests/writepath.cmake. Every
# process it starts is stopped by pid on exit; all files live in a fresh
# temporary directory. Exit 0 pass, 1 fail, 77 skip (no curl or wrk).
set -u
case_=$1 app=$2 worker=$3 lua=$4

for tool in curl wrk; do
  command -v $tool >/dev/null 2>&1 || { echo "skipped [$tool]: $tool not installed"; exit 77; }
done

here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d "${TMPDIR:-/tmp}/writepath-test.XXXXXX")
app_pid="" worker_pid="" wrk_pid="" check_pid="" port=""
cleanup() {
  for p in $app_pid $worker_pid $wrk_pid $check_pid; do kill -TERM "$p" 2>/dev/null; done
  for p in $app_pid $worker_pid $wrk_pid $check_pid; do wait "$p" 2>/dev/null; done
  if [ "${failed:-0}" = 1 ]; then
    for f in "$dir"/*.err; do [ -f "$f" ] && { echo "--- $f"; tail -n 20 "$f"; }; done
  fi
  rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

fail() { echo "FAIL: $*"; failed=1; exit 1; }
pass() { echo "ok - $*"; }

# start_app MODE [extra serve args]: start the service, wait for its port.
start_app() {
  mode=$1; shift
  : >"$dir/app.out"
  "$app" serve --db "$dir/data.db" --mode "$mode" --port 0 "$@" \
    >"$dir/app.out" 2>>"$dir/app.err" &
  app_pid=$!
  i=0
  while ! grep -q '^port=' "$dir/app.out"; do
    i=$((i + 1))
    [ $i -gt 200 ] && fail "service ($mode) did not print its port"
    kill -0 "$app_pid" 2>/dev/null || fail "service ($mode) exited at start"
    sleep 0.05
  done
  port=$(sed -n 's/^port=//p' "$dir/app.out")
}

start_worker() {
  "$worker" --db "$dir/data.db" --concurrency 32 "$@" 2>>"$dir/worker.err" &
  worker_pid=$!
}

# stop PID NAME: SIGTERM, then the exit status must be 0 within 10 s.
stop() {
  kill -TERM "$1" || fail "$2 is not running"
  i=0
  while kill -0 "$1" 2>/dev/null; do
    i=$((i + 1))
    [ $i -gt 200 ] && fail "$2 did not stop within 10 s of SIGTERM"
    sleep 0.05
  done
  wait "$1"
  rc=$?
  [ $rc -eq 0 ] || fail "$2 exited with $rc after SIGTERM"
}
stop_app() { stop "$app_pid" service; app_pid=""; }
stop_worker() { stop "$worker_pid" worker; worker_pid=""; }

# post PATH BODY [curl args]: prints the status code; the body goes to $dir/body.
post() {
  path=$1 body=$2; shift 2
  printf '%s' "$body" | curl -s -o "$dir/body" -w '%{http_code}' -X POST \
    -H 'Content-Type: application/json' --data-binary @- "$@" \
    "http://127.0.0.1:$port$path"
}

# expect STATUS ERROR PATH BODY: a 4xx answer with {"error":"ERROR",...}.
expect() {
  got=$(post "$3" "$4")
  [ "$got" = "$1" ] || fail "$3 $4: status $got, expected $1 ($(cat "$dir/body"))"
  grep -q "\"error\":\"$2\"" "$dir/body" || fail "$3 $4: no JSON error $2: $(cat "$dir/body")"
}

# check_json KEY VALUE...: run the consistency check, require ok and each KEY=VALUE.
check() {
  "$app" check --db "$dir/data.db" --timeout 60 >"$dir/check.json" 2>>"$dir/check.err"
  rc=$?
  [ $rc -eq 0 ] || fail "consistency check failed: $(cat "$dir/check.json")"
  while [ $# -gt 1 ]; do
    grep -q "\"$1\":$2[,}]" "$dir/check.json" || fail "check: expected $1=$2: $(cat "$dir/check.json")"
    shift 2
  done
}

case_lifecycle() {
  for mode in naive async; do
    start_app $mode
    [ "$mode" = async ] && start_worker
    [ "$(post /comment '{"post_id":1,"user_id":5,"body":"hi"}')" = 201 ] \
      || fail "$mode: POST /comment did not answer 201: $(cat "$dir/body")"
    grep -q "\"mode\":\"$mode\"" "$dir/body" || fail "$mode: wrong mode in $(cat "$dir/body")"
    check
    stop_app
    [ "$mode" = async ] && stop_worker
    pass "$mode: starts on a free port, answers, stops cleanly on SIGTERM"
  done
  check comments 2 notifications 2
  # A queue that cannot be opened: a clear message and exit status 1.
  "$app" serve --db "$dir/data.db" --mode async --port 0 --queue "sqlite:$dir/no/such/dir/q.db" \
    >/dev/null 2>"$dir/badqueue.err"
  rc=$?
  [ $rc -eq 1 ] || fail "bad queue URL: exit status $rc, expected 1"
  grep -q "cannot open queue" "$dir/badqueue.err" || fail "bad queue URL: no message"
  "$app" serve --db "$dir/data.db" --mode async --port 0 --queue "bogus://x" \
    >/dev/null 2>"$dir/badqueue.err"
  [ $? -eq 1 ] || fail "unknown queue URL scheme accepted"
  pass "unusable --queue URLs are reported, exit status 1"
}

case_validation() {
  big=$(head -c 20000 /dev/zero | tr '\0' 'a')
  long=$(head -c 1001 /dev/zero | tr '\0' 'b')
  for mode in naive async; do
    start_app $mode
    for path in /comment /like; do
      expect 400 invalid_request $path '{"post_id":1,'
      expect 400 invalid_request $path ''
      expect 400 invalid_request $path '[1,2]'
      expect 400 invalid_request $path '{"user_id":5,"body":"x"}'
      expect 400 invalid_request $path '{"post_id":1,"body":"x"}'
      expect 400 invalid_request $path '{"post_id":"1","user_id":5,"body":"x"}'
      expect 400 invalid_request $path '{"post_id":-3,"user_id":5,"body":"x"}'
      expect 404 unknown_post $path '{"post_id":100000,"user_id":5,"body":"x"}'
      expect 404 unknown_user $path '{"post_id":1,"user_id":100000,"body":"x"}'
      expect 413 too_large $path "{\"post_id\":1,\"user_id\":5,\"body\":\"$big\"}"
    done
    expect 400 invalid_request /comment '{"post_id":1,"user_id":5}'
    expect 400 invalid_request /comment '{"post_id":1,"user_id":5,"body":""}'
    expect 400 invalid_request /comment "{\"post_id\":1,\"user_id\":5,\"body\":\"$long\"}"
    expect 400 invalid_request /comment '{"post_id":1,"user_id":5,"body":7}'
    expect 404 not_found /nothing '{}'
    got=$(curl -s -o "$dir/body" -w '%{http_code}' "http://127.0.0.1:$port/comment")
    [ "$got" = 405 ] || fail "GET /comment: $got, expected 405"
    stop_app
    check comments 0 likes 0 notifications 0
    pass "$mode: invalid JSON, missing and mistyped fields, unknown post/user, oversized body -> 4xx JSON, nothing written"
  done
  # A duplicate like is refused and changes nothing.
  start_app naive
  [ "$(post /like '{"post_id":2,"user_id":9}')" = 201 ] || fail "first like not 201"
  expect 409 already_liked /like '{"post_id":2,"user_id":9}'
  stop_app
  check likes 1 notifications 1
  pass "a duplicate like answers 409 and writes nothing"
}

# A refused write (unknown user or post, duplicate like) must not leave its
# pooled connection with an old read snapshot: with one pooled connection
# and the worker writing between requests, every later valid write answers
# 201 (it used to fail with 503 while the worker ran).
case_snapshot() {
  start_app async --pool 1
  start_worker --push-ms 1
  [ "$(post /like '{"post_id":4,"user_id":8}')" = 201 ] || fail "first like not 201"
  i=0
  while [ $i -lt 30 ]; do
    case $((i % 3)) in
      0) expect 404 unknown_user /comment '{"post_id":1,"user_id":100000,"body":"x"}' ;;
      1) expect 404 unknown_post /comment '{"post_id":100000,"user_id":5,"body":"x"}' ;;
      2) expect 409 already_liked /like '{"post_id":4,"user_id":8}' ;;
    esac
    sleep 0.05 # the worker counts the previous comment meanwhile
    got=$(post /comment "{\"post_id\":2,\"user_id\":$((i + 10)),\"body\":\"after $i\"}")
    [ "$got" = 201 ] || fail "valid write $i after a refused one: $got $(cat "$dir/body")"
    i=$((i + 1))
  done
  check uncounted 0
  stop_app
  stop_worker
  pass "30 valid writes after refused ones on a 1-connection pool, worker writing: all 201"
}

# A write answered 201 whose outbox row the relay has not turned into a
# job yet: the queue looks drained, but the check must wait for the outbox
# as it waits for the queue (it used to report uncounted 1 and
# outbox_pending 1 at once; seen in case_trace under load). The row is
# made with the service stopped, so the relay of the service started a
# second later is what the check waits for.
case_outbox_wait() {
  command -v python3 >/dev/null 2>&1 || { echo "skipped [python3]: python3 not installed"; exit 77; }
  start_app async
  start_worker --push-ms 1
  [ "$(post /comment '{"post_id":1,"user_id":5,"body":"first"}')" = 201 ] || fail "first POST"
  check uncounted 0
  stop_app
  python3 - "$dir/data.db" <<'PY' || fail "cannot add the unrelayed write"
import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1])
now = int(time.time() * 1000)
with db:
    cid = db.execute("INSERT INTO comments(post_id, user_id, body, created_at)"
                     " VALUES (1, 6, 'unrelayed', ?)", (now,)).lastrowid
    db.execute("INSERT INTO outbox(kind, row_id, post_id, user_id, created_at)"
               " VALUES ('comment', ?, 1, 6, ?)", (cid, now))
PY
  "$app" check --db "$dir/data.db" --timeout 60 >"$dir/check.json" 2>>"$dir/check.err" &
  check_pid=$!
  sleep 1
  start_app async
  wait "$check_pid"
  rc=$? check_pid=""
  [ $rc -eq 0 ] || fail "the check did not wait for the outbox: $(cat "$dir/check.json")"
  grep -q '"uncounted":0,"outbox_pending":0,' "$dir/check.json" \
    || fail "check: $(cat "$dir/check.json")"
  stop_app
  stop_worker
  pass "a write still in the outbox while the queue looks drained: the check waits for the relay, then passes"
}

# run_wrk SECONDS: a short load; require requests and no errors of any kind.
run_wrk() {
  wrk -t2 -c20 -d"$1"s -s "$lua" "http://127.0.0.1:$port" >"$dir/wrk.out" 2>&1 \
    || fail "wrk failed: $(cat "$dir/wrk.out")"
  line=$(sed -n 's/^WRK_JSON //p' "$dir/wrk.out")
  [ -n "$line" ] || fail "no WRK_JSON line: $(cat "$dir/wrk.out")"
  echo "$line" | grep -q '"errors":{"connect":0,"read":0,"write":0,"status":0,"timeout":0}' \
    || fail "wrk saw errors: $line"
  echo "$line" | grep -q '"requests":0,' && fail "wrk made no request: $line"
  echo "  $line"
}

case_load() {
  start_app naive
  run_wrk 2
  stop_app
  check
  pass "naive: 2 s of wrk (20 connections), no errors, consistent"
  # The worker's push is shortened so the backlog of a few thousand jobs
  # drains in seconds; the request path is the real one.
  start_app async
  start_worker --concurrency 64 --push-ms 2
  run_wrk 2
  stop_app
  check uncounted 0 missing_notifications 0
  stop_worker
  pass "async: 2 s of wrk (20 connections), no errors; after the queue drained the counts and notifications are consistent"
}

case_trace() {
  tid=4bf92f3577b34da6a3ce929d0e0e4736
  start_app async --trace "$dir/trace.jsonl"
  start_worker --trace "$dir/trace.jsonl"
  got=$(post /comment '{"post_id":3,"user_id":11,"body":"traced"}' -D "$dir/headers" \
    -H "traceparent: 00-$tid-00f067aa0ba902b7-01")
  [ "$got" = 201 ] || fail "traced POST: $got"
  grep -qi "^traceparent: 00-$tid-" "$dir/headers" || fail "response does not continue the trace"
  check
  stop_app
  stop_worker
  grep -q "writepath-worker.*\"traceId\":\"$tid\"" "$dir/trace.jsonl" \
    || fail "no worker span with the request's trace id"
  # The worker's job span is the child of the service's queue.add span.
  enq=$(grep "writepath-app" "$dir/trace.jsonl" | grep -o '"spanId":"[0-9a-f]*","name":"queue.add"' \
    | sed 's/"spanId":"\([0-9a-f]*\)".*/\1/')
  [ -n "$enq" ] || fail "no queue.add span"
  grep "writepath-worker" "$dir/trace.jsonl" | grep -q "\"name\":\"worker comment\".*\"parentSpanId\":\"$enq\"" \
    || fail "the worker span is not a child of queue.add $enq"
  # The request span continues the incoming traceparent.
  grep -q "\"name\":\"POST /comment\".*\"parentSpanId\":\"00f067aa0ba902b7\"" "$dir/trace.jsonl" \
    || fail "the request span is not a child of the incoming span"
  "$app" waterfall "$dir/trace.jsonl" "$tid" >"$dir/w.svg" || fail "waterfall failed"
  grep -q '^<svg' "$dir/w.svg" && grep -q 'stroke-dasharray' "$dir/w.svg" \
    && grep -q 'worker comment' "$dir/w.svg" && grep -q 'push.send' "$dir/w.svg" \
    || fail "waterfall SVG lacks rows or the boundary line"
  "$app" boundary "$dir/trace.jsonl" >"$dir/b.json" || fail "boundary failed"
  grep -q '"traces":1,"crossing_process":1,' "$dir/b.json" || fail "boundary: $(cat "$dir/b.json")"
  pass "async trace: request -> queue.add -> worker job -> push in one trace; waterfall and boundary drawn"
}

# raw.py: a raw-socket HTTP client for requests curl will not send.
#   raw.py PORT HEAD_PY [IDLE]  HEAD_PY: a Python bytes expression, sent as
#   is; IDLE > 0 first opens that many idle connections (held while the
#   request runs). Prints "SECONDS STATUS BODY" (STATUS 0 = no answer) of
#   the first answer; with RAW_ANSWERS=N it reads N answers and adds
#   " | STATUS BODY" for each further one; with RAW_CLOSE=1 it then waits
#   up to 2 s for the server to close and adds " [closed]" or " [open]".
write_raw_py() {
  cat >"$dir/raw.py" <<'PY'
import os, resource, socket, sys, time
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
if soft != resource.RLIM_INFINITY and soft < 4096:
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(4096, hard), hard))
port, req = int(sys.argv[1]), eval(sys.argv[2])
idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(int(sys.argv[3]) if len(sys.argv) > 3 else 0)]
time.sleep(0.2 if idle else 0)

def answer_len(buf):  # bytes of the complete answer at the front of buf, or 0
    if b"\r\n\r\n" not in buf:
        return 0
    head, rest = buf.split(b"\r\n\r\n", 1)
    n = int(([l.split(b":")[1] for l in head.split(b"\r\n") if l.lower().startswith(b"content-length:")] or [b"0"])[0])
    return len(head) + 4 + n if len(rest) >= n else 0

t = time.time()
s = socket.create_connection(("127.0.0.1", port))
s.settimeout(5)
out, answers, eof = b"", [], False
try:
    s.sendall(req)
    while len(answers) < int(os.environ.get("RAW_ANSWERS", "1")):
        n = answer_len(out)
        if n:
            answers.append(out[:n])
            out = out[n:]
            continue
        b = s.recv(65536)
        if not b:
            eof = True
            break
        out += b
except OSError:
    pass
secs = time.time() - t
if not answers and out:
    answers.append(out)
shown = []
for a in answers or [b""]:
    status = a.split(b" ", 2)[1].decode() if a.startswith(b"HTTP/") else "0"
    body = a.split(b"\r\n\r\n", 1)[1].decode(errors="replace") if b"\r\n\r\n" in a else ""
    shown.append("%s %s" % (status, body))
closed = ""
if os.environ.get("RAW_CLOSE"):
    try:
        s.settimeout(2)
        eof = eof or (not out and s.recv(65536) == b"")
    except OSError as e:
        eof = isinstance(e, ConnectionResetError)
    closed = " [closed]" if eof else " [open]"
print("%.2f %s%s" % (secs, " | ".join(shown), closed))
PY
}

# raw HEAD_PY STATUS ERROR [IDLE]: the answer must be STATUS with the JSON
# error ERROR, within 2 s.
raw() {
  out=$(python3 "$dir/raw.py" "$port" "$1" ${4:-0})
  set -- "$@" "$out"
  case "$out" in
    *" $2 {\"error\":\"$3\""*) ;;
    *) fail "raw request $1: expected $2 $3, got: $out" ;;
  esac
  secs=${out%% *}
  [ "${secs%%.*}" -lt 2 ] || fail "raw request $1: answered after $secs s"
}

# raw_closed HEAD_PY STATUS ERROR: the same, and then the service closes
# the connection (as HTTP requires after a request it could not read).
raw_closed() {
  RAW_CLOSE=1 raw "$@"
  case "$out" in *" [closed]") ;; *) fail "raw request $1: connection not closed: $out" ;; esac
}

# Requests llhttp refuses, and the rules the service adds, get the API's
# JSON error (never an HTML page, never a silent close), answered before
# any body is read; the connection is then closed.
case_malformed() {
  command -v python3 >/dev/null 2>&1 || { echo "skipped [python3]: python3 not installed"; exit 77; }
  write_raw_py
  start_app async --idle-timeout 1
  h='b"POST /comment HTTP/1.1\r\nHost: x\r\n'
  raw_closed "${h}Transfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n\"" 411 length_required
  raw_closed "${h}Transfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n\"" 411 length_required
  raw_closed "${h}Transfer-Encoding: gzip, chunked\r\n\r\n2;x=\x01\r\n{}\r\n\"" 411 length_required
  raw_closed "${h}Content-Length: 99999999\r\n\r\n{}\"" 413 too_large
  raw_closed "${h}X-Big: \" + b\"a\" * 20000 + b\"\r\nContent-Length: 2\r\n\r\n{}\"" 431 headers_too_large
  raw_closed "${h}X-Big: \" + b\"a\" * 200000 + b\"\r\nContent-Length: 2\r\n\r\n{}\"" 431 headers_too_large
  raw_closed "${h}\" + b\"X-Many: aaaaaaaaaaaaaaaa\r\n\" * 20000 + b\"Content-Length: 2\r\n\r\n{}\"" 431 headers_too_large
  raw "${h}Content-Length: 2\r\n\r\n{}\"" 400 invalid_request
  # What libmicrohttpd answered with its own HTML page or not at all.
  raw_closed "${h}Content-Length: abc\r\n\r\n{}\"" 400 invalid_request
  raw_closed "${h}Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}\"" 400 invalid_request
  raw_closed 'b"POST /comment HTTP/2.0\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}"' 505 version_not_supported
  raw_closed 'b"POST /comment HTTP/1.7\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}"' 505 version_not_supported
  raw_closed 'b"GARBAGE\r\n\r\n"' 400 invalid_request
  raw_closed 'b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + b"\x00" * 64' 400 invalid_request
  raw_closed "${h}X-Bad: a\x01b\r\nContent-Length: 2\r\n\r\n{}\"" 400 invalid_request
  # A request begun and then left idle past --idle-timeout.
  raw_closed "${h}Content-Length: 10\r\n\r\n{}\"" 408 request_timeout
  # The rules hold for every request of a keep-alive connection, not only
  # the first: a good one, then a bad one on the same connection.
  ka='b"POST /like HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}'
  out=$(RAW_ANSWERS=2 RAW_CLOSE=1 python3 "$dir/raw.py" "$port" "${ka}POST /like HTTP/1.7\r\n\r\n\"")
  case "$out" in
    *' 400 {"error":"invalid_request"'*' | 505 {"error":"version_not_supported"'*' [closed]') ;;
    *) fail "keep-alive: a bad second request: $out" ;;
  esac
  out=$(RAW_ANSWERS=2 RAW_CLOSE=1 python3 "$dir/raw.py" "$port" "${ka}${h#b\"}Content-Length: x\r\n\r\n\"")
  case "$out" in
    *' 400 {"error":"invalid_request"'*' | 400 {"error":"invalid_request"'*' [closed]') ;;
    *) fail "keep-alive: a bad Content-Length in the second request: $out" ;;
  esac
  stop_app
  check comments 0 likes 0
  pass "chunked or any Transfer-Encoding -> 411; Content-Length over 16 KiB -> 413 before the body; 20 KB, 200 KB and 520 KB heads -> 431; non-numeric or duplicate Content-Length, HTTP/2.0, HTTP/1.7, a garbage request line, a TLS hello, a bad header byte -> 400/505; a stalled body -> 408; also on the 2nd request of a connection: JSON errors, connection closed, nothing written"
}

# Idle connections past --max-connections: the next client gets a JSON 503
# at once (it used to wait unanswered for up to 60 s), and once the idle
# ones close the service answers again.
case_overload() {
  command -v python3 >/dev/null 2>&1 || { echo "skipped [python3]: python3 not installed"; exit 77; }
  write_raw_py
  start_app naive --max-connections 50
  body='{"post_id":1,"user_id":5,"body":"x"}'
  req="b'POST /comment HTTP/1.1\r\nHost: x\r\nContent-Length: ${#body}\r\n\r\n$body'"
  raw "$req" 503 overloaded 150
  # Past both shares (50 served, 1024 answered 503) a connection is closed
  # at once, and the service still stops cleanly afterwards (libmicrohttpd
  # left to refuse connections itself could hang its stop).
  out=$(python3 "$dir/raw.py" "$port" "$req" 1200)
  case "$out" in 0.* | 1.*) ;; *) fail "1200 idle connections: no quick answer: $out" ;; esac
  i=0
  until [ "$(post /comment "$body")" = 201 ]; do
    i=$((i + 1))
    [ $i -gt 40 ] && fail "no 201 within 2 s after the idle connections closed"
    sleep 0.05
  done
  out=$(python3 "$dir/raw.py" "$port" "$req" 40)
  case "$out" in *' 201 {"kind":"comment"'*) ;; *) fail "40 idle of 50: $out" ;; esac
  stop_app
  pass "150 idle connections at a limit of 50: the 151st client gets 503 overloaded at once; 1200: closed at once; with 40 idle, 201; stops cleanly"
}

# tests/writepath/slow.py: the slowloris clients (its opening says how it runs).

# The slowloris rule: a request's head and body must arrive within
# --request-timeout (not an idle timer a trickled byte restarts), the
# keep-alive connection idle the longest gives its place to a new one when
# all are taken, and normal clients are served while 1,000 trickling
# connections are held (they used to take every place: 503 for as long as
# they trickled).
case_slowloris() {
  command -v python3 >/dev/null 2>&1 || { echo "skipped [python3]: python3 not installed"; exit 77; }
  start_app naive --push-ms 1
  out=$(python3 "$here/slow.py" hold "$port" 1000 6 10) || fail "$out"
  echo "  $out"
  stop_app
  start_app naive --request-timeout 2 --push-ms 1
  out=$(python3 "$here/slow.py" deadline "$port" 20 6 HEAD) || fail "$out"
  echo "  $out"
  out=$(python3 "$here/slow.py" deadline "$port" 20 6 BODY) || fail "$out"
  echo "  $out"
  stop_app
  start_app naive --max-connections 20 --push-ms 1
  out=$(python3 "$here/slow.py" idle "$port" 20) || fail "$out"
  echo "  $out"
  stop_app
  pass "1,000 trickling connections held: normal requests answered 201; trickled heads and bodies get 408 by --request-timeout; at the limit an idle keep-alive connection gives its place"
}

# kill -9 of the async service under load, then a restart: the comment or
# like and its outbox row commit in one transaction of the data database,
# the outbox relay deletes a row only after its job is stored, and the
# restarted service relays what the killed one left (job id = outbox row
# id, so a job that did get stored is not doubled). After the queue
# drained nothing may be uncounted and no count may differ.
case_crash() {
  q=${1:-}
  set -- ${q:+--queue "$q"}
  start_app async "$@"
  start_worker --concurrency 64 --push-ms 2 "$@"
  wrk -t2 -c20 -d3s -s "$lua" "http://127.0.0.1:$port" >"$dir/wrk.out" 2>&1 &
  wrk_pid=$!
  sleep 1.5
  kill -9 "$app_pid"
  wait "$app_pid" 2>/dev/null
  app_pid=""
  wait "$wrk_pid"
  wrk_pid=""
  start_app async "$@"
  "$app" check --db "$dir/data.db" "$@" --timeout 60 >"$dir/check.json" 2>>"$dir/check.err" \
    || fail "consistency check after kill -9: $(cat "$dir/check.json")"
  stop_app
  stop_worker
  grep -q '"comments":0,' "$dir/check.json" && fail "no comment was written before the kill"
  readded=$(sed -n 's/.*outbox: \([0-9]*\) jobs of an earlier run added.*/\1/p' "$dir/app.err")
  pass "kill -9 under load${q:+ (queue $q)}, restart: $(sed 's/.*"comments":\([0-9]*\).*/\1/' "$dir/check.json") comments, ${readded:-0} jobs of the killed run relayed at restart, none uncounted, no count mismatch"
}

# The same, with the queue in Redis (skipped without LANES_TEST_REDIS_URL).
case_crash_redis() {
  [ -n "${LANES_TEST_REDIS_URL:-}" ] || { echo "skipped [redis]: LANES_TEST_REDIS_URL not set"; exit 77; }
  case_crash "$LANES_TEST_REDIS_URL"
}

# The same async service with its queue in Redis (the BullMQ-compatible
# backend): a short load, then the check drains that queue.
case_redis() {
  [ -n "${LANES_TEST_REDIS_URL:-}" ] || { echo "skipped [redis]: LANES_TEST_REDIS_URL not set"; exit 77; }
  start_app async --queue "$LANES_TEST_REDIS_URL"
  start_worker --queue "$LANES_TEST_REDIS_URL" --concurrency 64 --push-ms 2
  run_wrk 2
  stop_app
  "$app" check --db "$dir/data.db" --queue "$LANES_TEST_REDIS_URL" --timeout 60 \
    >"$dir/check.json" 2>>"$dir/check.err" || fail "check (redis): $(cat "$dir/check.json")"
  stop_worker
  pass "async with --queue $LANES_TEST_REDIS_URL: no errors, consistent after the drain"
}

case "$case_" in
  lifecycle | validation | load | trace | redis | snapshot | crash | crash_redis | malformed | \
    overload | outbox_wait | slowloris)
    "case_$case_" ;;
  *) echo "unknown case $case_"; exit 2 ;;
esac
exit 0
