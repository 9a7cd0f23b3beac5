"""test_edit.py - the edit endpoints of `lanes dash`'s JSON API, on one
store (cli/dash_edit.c, docs/dash.md "Edits"): a job's priority, delay and
data (byte for byte, or refused with the store's message and nothing
changed), promote all, the counts per priority (bounded to 20
priorities), a dedup id's holder and its release; each one's success,
refused state, bad input, and --read-only and the write header refusing
it. The store is read back with `lanes jobs`.

    python3 test_edit.py sqlite|redis LANES_BIN

Exit 77 = skipped (redis without LANES_TEST_REDIS_URL).
"""
import json
import sys
import urllib.parse

from dashutil import Run, call, check

run_ = Run(sys.argv[1], sys.argv[2], "edit")
store, url, lanes = run_.store, run_.url, run_.lanes
expect, with_dash = run_.expect, run_.with_dash
W = {"X-Lanes-Dash": "1"}
# JSON.parse accepts it; a decoder that re-encodes would change it.
ODD = '{"a": 1.0e0 ,"big":123456789012345678901234567890,"s":"\\u00e9\xe9\\ud83d\\ude00","a":2}\n'


def job(q, jid):
    return json.loads(lanes("jobs", url, "get", q, jid, "--json"))


def counts(q):
    return json.loads(lanes("jobs", url, "counts", q, "--json"))


def fill():
    lanes("jobs", url, "add", "e", "n", '{"v":1}', "--id", "w1")
    lanes("jobs", url, "add", "e", "n", "{}", "--id", "d1", "--delay", "3600000")
    lanes("jobs", url, "add", "e", "n", "{}", "--id", "d2", "--delay", "7200000", "--priority", "4")
    lanes("jobs", url, "add", "e", "n", "{}", "--id", "dd", "--dedup", "key/1")
    lanes("jobs", url, "add", "f", "n", "{}", "--id", "f1")
    lanes("worker", url, "f", "--exit-when-empty", "--exec", "false")
    for i, p in enumerate([3, 3, 8]):
        lanes("jobs", url, "add", "pr", "n", "{}", "--id", "p%d" % i, "--priority", str(p))
    for p in range(1, 26):
        lanes("jobs", url, "add", "many", "n", "{}", "--priority", str(p * 10))


def run_read_only(base):
    for path, body in [("e/jobs/w1/priority?priority=2", None), ("e/jobs/d1/delay?delay_ms=5", None),
                       ("e/jobs/w1/data", "[1]"), ("e/promote-all", None),
                       ("e/dedup/key%2F1/remove", None)]:
        expect(call(base, "/api/queues/" + path, "POST", W, body), 403, "read_only",
               "--read-only refuses POST " + path.split("?")[0])
    s, b = call(base, "/api/queues/e/dedup/key%2F1")
    check(s == 200 and b["job_id"] == "dd", b)
    s, b = call(base, "/api/queues/pr/priorities")
    check(s == 200 and len(b["priorities"]) == 2, b)
    check(job("e", "w1")["priority"] == 0 and job("e", "w1")["data"] == {"v": 1})
    check(counts("e")["delayed"] == 2)
    print("ok   --read-only: reads answer, nothing changed")


def run_priority(base):
    p = "/api/queues/e/jobs/w1/priority"
    expect(call(base, p + "?priority=5", "POST"), 403, "forbidden", "priority without X-Lanes-Dash")
    b = expect(call(base, p + "?priority=5&lifo=1", "POST", W), 200, None, "priority of waiting")
    check(b == {"ok": True, "id": "w1", "action": "priority"}, b)
    j = job("e", "w1")
    check(j["priority"] == 5 and j["state"] == "prioritized", j)  # lifo: stores differ
    expect(call(base, p + "?priority=0", "POST", W), 200, None, "priority 0: waiting again")
    check(job("e", "w1")["state"] == "waiting")
    expect(call(base, "/api/queues/e/jobs/d1/priority?priority=9", "POST", W), 200, None,
           "priority of delayed")
    j = job("e", "d1")
    check(j["priority"] == 9 and j["state"] == "delayed", j)
    expect(call(base, "/api/queues/f/jobs/f1/priority?priority=1", "POST", W), 200, None,
           "priority of a failed job: taken, nothing moves")
    j = job("f", "f1")
    check(j["priority"] == 1 and j["state"] == "failed", j)
    for bad in ["", "?priority=x", "?priority=-1", "?priority=2097152", "?priority=1&lifo=2"]:
        expect(call(base, p + bad, "POST", W), 400, "bad_request", "priority " + (bad or "none"))
    expect(call(base, "/api/queues/e/jobs/nope/priority?priority=1", "POST", W), 404,
           "not_found", "priority of no such job")
    expect(call(base, p + "?priority=1"), 404, "not_found", "GET of priority")


def run_delay(base):
    p = "/api/queues/e/jobs/d1/delay"
    before = job("e", "d1")["run_at_ms"]
    expect(call(base, p + "?delay_ms=60000", "POST", W), 200, None, "delay of delayed")
    after = job("e", "d1")["run_at_ms"]
    check(after < before - 3000000 and job("e", "d1")["state"] == "delayed", (before, after))
    b = expect(call(base, "/api/queues/e/jobs/w1/delay?delay_ms=5", "POST", W), 409, "invalid",
               "delay of a waiting job")
    check("delayed" in b["error"]["message"], b)
    check(job("e", "w1")["state"] == "waiting")
    for bad in ["", "?delay_ms=-1", "?delay_ms=1e3", "?delay_ms=9999999999999999"]:
        expect(call(base, p + bad, "POST", W), 400, "bad_request", "delay " + (bad or "none"))


def run_data(base):
    p = "/api/queues/e/jobs/w1/data"
    expect(call(base, p, "POST", W, ODD), 200, None, "data: an odd JSON text")
    s, b = call(base, "/api/queues/e/jobs/w1")
    check(b["data_text"] == ODD, b["data_text"])
    raw = lanes("jobs", url, "get", "e", "w1", "--json")
    check('"data":' + ODD.rstrip("\n") + ',"result"' in raw, raw)  # (it cuts the newline)
    print("ok   data: stored byte for byte")
    for bad, what in [('{"a":', "not JSON"), ("", "empty"), ("{} {}", "two texts"),
                      ("'x'", "single quotes")]:
        b = expect(call(base, p, "POST", W, bad), 400, "bad_request", "data " + what)
        check("JSON" in b["error"]["message"], b)
    expect(call(base, p, "POST", W, b'[1]\x00'), 400, "bad_request", "data with a NUL byte")
    expect(call(base, p, "POST", W, "[" + " " * (1 << 20) + "]"), 413, "too_large",
           "data over 1 MiB")
    expect(call(base, p, "POST", None, "[" + " " * (1 << 20) + "]"), 403, "forbidden",
           "data over 1 MiB without the write header: refused, not read")
    check(call(base, "/api/queues/e/jobs/w1")[1]["data_text"] == ODD)
    print("ok   data: refused texts changed nothing")
    expect(call(base, "/api/queues/f/jobs/f1/data", "POST", W, '"any state"'), 200, None,
           "data of a failed job")
    expect(call(base, "/api/queues/e/jobs/nope/data", "POST", W, "1"), 404, "not_found",
           "data of no such job")


def run_queue(base):
    s, b = call(base, "/api/queues/pr/priorities")
    check(s == 200 and b["priorities"] == [{"priority": 3, "count": 2},
                                           {"priority": 8, "count": 1}] and not b["more"], b)
    # a lifo job of priority 8 (on Redis counted at 7, as BullMQ counts it):
    # the walk still finds 3 and 8, and ends
    lanes("jobs", url, "add", "pr", "n", "{}", "--id", "p3", "--priority", "1")
    expect(call(base, "/api/queues/pr/jobs/p3/priority?priority=8&lifo=1", "POST", W), 200,
           None, "priority 8 with lifo")
    s, b = call(base, "/api/queues/pr/priorities")
    check([x["priority"] for x in b["priorities"]] == [3, 8] and not b["more"], b)
    check(b["priorities"][1]["count"] == (2 if store == "sqlite" else 1), b)
    # paused (SQLite lists the queue's ready jobs as paused): the same table
    lanes("jobs", url, "add", "pr", "n", "{}", "--id", "p4")  # priority 0: not in it
    lanes("jobs", url, "pause", "pr")
    s, b2 = call(base, "/api/queues/pr/priorities")
    check(b2["priorities"] == b["priorities"] and not b2["more"], (b, b2))
    lanes("jobs", url, "resume", "pr")
    s, b = call(base, "/api/queues/many/priorities")
    check([x["priority"] for x in b["priorities"]] == [p * 10 for p in range(1, 21)], b)
    check(b["more"] is True and b["reads"] <= 64, b)
    s, b = call(base, "/api/queues/empty/priorities")
    check(s == 200 and b["priorities"] == [] and not b["more"], b)
    expect(call(base, "/api/queues/a%3Ab/priorities"), 409, "invalid", "priorities of a bad name")
    print("ok   priorities: the counts, at most 20, none")
    expect(call(base, "/api/queues/e/promote-all", "POST"), 403, "forbidden",
           "promote-all without X-Lanes-Dash")
    b = expect(call(base, "/api/queues/e/promote-all", "POST", W), 200, None, "promote-all")
    check(b == {"ok": True, "promoted": 2}, b)
    k = counts("e")
    check(k["delayed"] == 0 and job("e", "d2")["state"] == "prioritized", k)
    b = expect(call(base, "/api/queues/e/promote-all", "POST", W), 200, None, "promote-all again")
    check(b["promoted"] == 0, b)
    expect(call(base, "/api/queues/e/promote-all"), 404, "not_found", "GET of promote-all")


def run_dedup(base):
    d = "/api/queues/e/dedup/key%2F1"
    s, b = call(base, d)
    check(s == 200 and b == {"queue": "e", "dedup_id": "key/1", "job_id": "dd",
                             "state": "waiting"}, b)
    expect(call(base, d + "/remove", "POST"), 403, "forbidden", "dedup remove without header")
    b = expect(call(base, d + "/remove", "POST", W), 200, None, "dedup remove")
    check(b == {"ok": True, "id": "key/1", "action": "dedup-remove", "removed": True}, b)
    s, b = call(base, d)
    check(s == 200 and b["job_id"] is None and b["state"] is None, b)
    check(job("e", "dd")["state"] == "waiting")  # the holder stays
    b = expect(call(base, d + "/remove", "POST", W), 200, None, "dedup remove of a free id")
    check(b["removed"] is False, b)
    expect(call(base, "/api/queues/a%3Ab/dedup/x"), 409, "invalid", "dedup of a bad queue name")
    expect(call(base, d + "/explode", "POST", W), 404, "not_found", "unknown dedup action")


def main():
    fill()
    with_dash(["--read-only"], run_read_only)
    # --max-data-size: the 1 MiB that run_data's 413 checks go past
    with_dash(["--max-data-size", str(1 << 20)],
              lambda b: [f(b) for f in (run_priority, run_delay, run_data, run_queue, run_dedup)])


run_.main(main)
