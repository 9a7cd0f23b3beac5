"""test_api.py - the JSON API of `lanes dash` at its edges, on one store:
names that need escaping in a path, bad arguments, unknown endpoints,
methods, the Host check, the loopback write header, a job's flow and its
bounds, removing a scheduler (and --read-only refusing it), a job waiting
for the children its run added, a custom backoff, removing a job with its
children, and that every error is JSON.

    python3 test_api.py sqlite|redis LANES_BIN

Exit 77 = skipped (redis without LANES_TEST_REDIS_URL).
"""
import json
import os
import subprocess
import sys
import time
import urllib.parse

from dashutil import Run, call, check

run_ = Run(sys.argv[1], sys.argv[2], "api")
store, url, tmp, lanes = run_.store, run_.url, run_.tmp, run_.lanes
expect, with_dash = run_.expect, run_.with_dash

SLASHY = "a/b q?#%"  # a queue name that needs escaping in a path
LONG_ID = "L/" + "x" * 3000  # a job id longer than 127 bytes, escaped in a path

def main():
    lanes("jobs", url, "add", SLASHY, "x", '{"k":"v"}', "--id", "j/1")
    lanes("jobs", url, "add", SLASHY, "x", "{}", "--id", LONG_ID)
    lanes("jobs", url, "add", "plain", "x", "{}", "--id", "p1")
    lanes("jobs", url, "schedule", "plain", "sch", "--cron", "0 0 1 1 *", "tick")
    with_dash(["--read-only"], run_read_only)
    with_dash([], run)
    add_flows()
    with_dash([], run_flow)
    with_dash([], run_steps)
    with_dash(["--queue", "plain", "--queue", "other"], run_fixed)


def flow(tree):
    path = os.path.join(tmp, "flow.json")
    with open(path, "w") as f:
        json.dump(tree, f)
    lanes("jobs", url, "flow", path)


def node(qname, jid, *children, **opts):
    return {"name": "n", "queueName": qname, "opts": {"jobId": jid, **opts},
            "children": list(children)}


def add_flows():
    # fl: root with c0..c4; c0 > g0 > h0 (4 levels)
    flow(node("fl", "root", node("fl", "c0", node("fl", "g0", node("fl", "h0"))),
              *[node("fl", "c%d" % i) for i in range(1, 5)]))
    # wide: a parent of 250 children (more than a page's 200 nodes)
    flow(node("wide", "w", *[node("wide", "k%03d" % i) for i in range(250)]))
    # flf: a child that fails, ignored by its parent (its reason recorded)
    flow(node("flf", "fr", node("flfk", "bad", ignoreDependencyOnFailure=True)))
    lanes("worker", url, "flfk", "--exit-when-empty", "--exec", "false")
    # rt: a tree of 4 for remove-tree; st1: a job whose --exec program
    # added a child and exited 78 (waiting-children after its run); b1: a
    # custom backoff type with a jitter
    flow(node("rt", "rt-root", node("rt", "rt-a", node("rtk", "rt-g")), node("rtk", "rt-b")))
    lanes("jobs", url, "add", "steps", "st", "{}", "--id", "st1")
    lanes("worker", url, "steps", "--exit-when-empty", "--exec", "/bin/sh", "-c",
          '"$0" jobs "$LANES_STORE_URL" add --parent "$LANES_JOB_QUEUE:$LANES_JOB_ID" '
          'stepkids k "{}" >/dev/null && exit 78', run_.lanes_bin)
    lanes("jobs", url, "add", "bo", "n", "{}", "--id", "b1", "--backoff", "linear:7:0.25")


def ids(n):
    """The tree as nested (id, [children]) pairs."""
    return (n["id"], [ids(c) for c in n["children"]])


def run_flow(base):
    f = "/api/queues/fl/jobs/%s/flow"
    s, b = call(base, f % "root")
    check(s == 200 and b["parent"] is None and b["children_total"] == 5, b)
    check([c["id"] for c in b["children"]] == ["c0", "c1", "c2", "c3", "c4"], b)
    check(all(c["status"] == "pending" and c["state"] for c in b["children"]), b)
    check(ids(b["tree"]) == ("root", [("c0", [("g0", [("h0", [])])])] +
                             [("c%d" % i, []) for i in range(1, 5)]), b)
    check(b["nodes"] == 8 and b["truncated"] is False and b["levels_up"] == 0, b)
    check(b["tree"]["state"] == "waiting-children" and b["tree"].get("self") is True, b)
    s, b = call(base, f % "h0")
    check(s == 200 and b["parent"]["id"] == "g0" and b["parent"]["queue"] == "fl", b)
    check(b["root"] == {"queue": "fl", "id": "root"} and b["levels_up"] == 3, b)
    check(b["tree"]["id"] == "root" and b["nodes"] == 8, b)
    run_.ok("flow: parent, children and the whole tree from the root")
    s, b = call(base, f % "root" + "?nodes=3")
    check(b["nodes"] == 3 and b["truncated"] is True and b["tree"]["more"] == 3, b)
    s, b = call(base, f % "h0" + "?nodes=3")
    check(b["top"]["id"] == "c0" and b["root"]["id"] == "root", b)
    check(ids(b["tree"]) == ("c0", [("g0", [("h0", [])])]) and b["truncated"], b)
    s, b = call(base, f % "root" + "?depth=2")
    check(b["nodes"] == 6 and b["tree"]["children"][0]["more"] == 1, b)
    s, b = call(base, f % "h0" + "?depth=2")
    check(ids(b["tree"]) == ("g0", [("h0", [])]) and b["root"]["id"] == "root", b)
    run_.ok("flow: nodes and depth bound the tree; the path to the job is always in it")
    s, b = call(base, "/api/queues/wide/jobs/w/flow")
    check(b["children_total"] == 250 and len(b["children"]) == 200, b["children_total"])
    check(b["nodes"] == 200 and b["tree"]["more"] == 51 and b["truncated"], b["nodes"])
    s, b = call(base, "/api/queues/wide/jobs/k249/flow?nodes=2")
    check(ids(b["tree"]) == ("w", [("k249", [])]) and b["tree"]["more"] == 249, b)
    run_.ok("flow: a parent of 250 children shows 200, says 51 more; a deep child is kept")
    s, b = call(base, "/api/queues/flf/jobs/fr/flow")
    c = b["children"][0]
    check(c["queue"] == "flfk" and c["status"] == "failed" and c["state"] == "failed", b)
    check(c["value"], b)
    check(b["state"] == "waiting", b)  # the ignored failure released it
    run_.ok("flow: a failed child's status and reason (%r)" % c["value"])
    s, b = call(base, "/api/queues/plain/jobs/p1/flow")
    check(b["parent"] is None and b["children"] == [] and b["nodes"] == 1, b)
    check(ids(b["tree"]) == ("p1", []), b)
    expect((s, b), 200, None, "flow of a job in no flow")
    for bad in ["nodes=0", "nodes=201", "depth=0", "depth=11", "nodes=x", "depth="]:
        expect(call(base, f % "root" + "?" + bad), 400, "bad_request", "flow " + bad)
    expect(call(base, f % "nope"), 404, "not_found", "flow of no such job")
    expect(call(base, "/api/queues/a%3Ab/jobs/x/flow"), 409, "invalid", "flow of a bad name")
    expect(call(base, f % "root", "DELETE", {"X-Lanes-Dash": "1"}), 405, "method_not_allowed",
           "DELETE flow")
    qs = urllib.parse.quote(SLASHY, safe="")
    got = call(base, "/api/queues/%s/jobs/%s/flow" % (qs, urllib.parse.quote(LONG_ID, safe="")))
    expect(got, 200, None, "flow of a job with a 3002-byte id")
    check(got[1]["tree"]["id"] == LONG_ID, got)


def run_steps(base):
    """A job waiting for the children its run added; a custom backoff;
    remove-tree."""
    s, b = call(base, "/api/queues/steps/jobs/st1")
    check(s == 200 and b["state"] == "waiting-children" and b["waited"] is True, b)
    check(b["attempts_started"] == 1 and b["attempts_made"] == 0, b)
    s, b = call(base, "/api/queues/steps/jobs?state=waiting-children")
    check([(j["id"], j["waited"]) for j in b["jobs"]] == [("st1", True)], b)
    s, b = call(base, "/api/queues/fl/jobs?state=waiting-children")
    check(b["jobs"] and not any(j["waited"] for j in b["jobs"]), b)
    run_.ok("waited: a job its run moved to waiting-children, not a flow parent added so")
    s, b = call(base, "/api/queues/bo/jobs/b1")
    check((b["backoff"], b["backoff_custom"], b["backoff_ms"], b["backoff_jitter"]) == \
        ("linear", True, 7, 0.25), b)
    s, b = call(base, "/api/queues/plain/jobs/p1")
    check((b["backoff"], b["backoff_custom"], b["backoff_ms"], b["backoff_jitter"]) == \
        ("fixed", False, 0, 0), b)
    run_.ok("backoff: a custom type with its jitter; none is fixed 0 ms, jitter 0")
    w = {"X-Lanes-Dash": "1"}
    rt = "/api/queues/rt/jobs/rt-root/remove-tree"
    expect(call(base, rt, "POST"), 403, "forbidden", "remove-tree without X-Lanes-Dash")
    expect(call(base, rt), 404, "not_found", "GET of remove-tree")
    s, b = call(base, rt, "POST", w)
    check(s == 200 and b == {"ok": True, "id": "rt-root", "action": "remove-tree",
                             "removed": 4}, b)
    for q, jid in [("rt", "rt-root"), ("rt", "rt-a"), ("rtk", "rt-g"), ("rtk", "rt-b")]:
        expect(call(base, "/api/queues/%s/jobs/%s" % (q, jid)), 404, "not_found",
               "%s is gone with its tree" % jid)
    expect(call(base, rt, "POST", w), 404, "not_found", "remove-tree again")
    # a tree of 1001 entries (a flow of 1000 and one more child) is too big
    flow(node("big", "big-root", *[node("big", "b%03d" % i) for i in range(999)]))
    lanes("jobs", url, "add", "--parent", "big:big-root", "big", "extra", "{}")
    expect(call(base, "/api/queues/big/jobs/big-root/remove-tree", "POST", w), 409, "too_big",
           "remove-tree of 1001 entries")
    check('"waiting-children":1' in lanes("jobs", url, "counts", "big", "--json"))
    # a tree with a running child is refused, and stays
    flow(node("bz", "bz-root", node("bzk", "bz-kid")))
    wk = subprocess.Popen([run_.lanes_bin, "worker", url, "bzk", "--grace", "1", "--exec",
                           "sleep", "30"], stderr=subprocess.DEVNULL)
    try:
        for _ in range(500):
            if '"active":1' in lanes("jobs", url, "counts", "bzk", "--json"):
                break
            time.sleep(0.01)
        expect(call(base, "/api/queues/bz/jobs/bz-root/remove-tree", "POST", w), 409, "busy",
               "remove-tree while a child runs")
        lanes("jobs", url, "get", "bz", "bz-root")
    finally:
        wk.terminate()
        wk.wait(timeout=20)


def run_read_only(base):
    expect(call(base, "/api/queues/plain/schedulers/sch/remove", "POST", {"X-Lanes-Dash": "1"}),
           403, "read_only", "remove a scheduler under --read-only")
    check("sch" in lanes("jobs", url, "schedules", "plain"))


def run_fixed(base):
    s, body = call(base, "/api/queues")
    check([q["name"] for q in body["queues"]] == ["plain", "other"], body)
    check(body["queues"][1]["counts"]["waiting"] == 0, body)
    run_.ok("--queue: only the queues given, in their order")


def run(base):
    qs = urllib.parse.quote(SLASHY, safe="")
    s, body = call(base, "/api/queues")
    check(s == 200 and sorted(q["name"] for q in body["queues"]) == sorted([SLASHY, "plain"]))
    expect(call(base, "/api/queues/" + qs + "/jobs/" + urllib.parse.quote("j/1", safe="")),
           200, None, "a job of queue %r, id 'j/1'" % SLASHY)
    s, body = call(base, "/api/queues/" + qs + "/jobs?state=waiting")
    check(body["jobs"][0]["id"] == "j/1", body)
    w = {"X-Lanes-Dash": "1"}
    expect(call(base, "/api/queues/plain/jobs?state=nope"), 400, "bad_request", "unknown state")
    expect(call(base, "/api/queues/plain/jobs?limit=101"), 400, "bad_request", "limit 101")
    expect(call(base, "/api/queues/plain/jobs?offset=-1"), 400, "bad_request", "offset -1")
    # the next page by the last row's cursor (offset then only numbers the rows)
    for i in range(3):
        lanes("jobs", url, "add", "pg", "x", "{}", "--id", "pg%d" % i)
    s, b1 = call(base, "/api/queues/pg/jobs?state=waiting&limit=2")
    check(s == 200 and [j["id"] for j in b1["jobs"]] == ["pg0", "pg1"] and b1["next_after"], b1)
    s, b2 = call(base, "/api/queues/pg/jobs?state=waiting&limit=2&offset=2&after=" +
                 urllib.parse.quote(b1["next_after"], safe=""))
    check(s == 200 and [j["id"] for j in b2["jobs"]] == ["pg2"] and b2["offset"] == 2, b2)
    expect(call(base, "/api/queues/pg/jobs?state=waiting&after=nonsense"), 400, "bad_request",
           "a cursor this store did not make")
    expect(call(base, "/api/queues/pg/jobs?state=delayed&after=" +
                urllib.parse.quote(b1["next_after"], safe="")), 400, "bad_request",
           "a cursor of another state")
    expect(call(base, "/api/queues/plain/jobs/nope"), 404, "not_found", "no such job")
    expect(call(base, "/api/queues/plain/metrics?points=0"), 400, "bad_request", "points 0")
    expect(call(base, "/api/queues/plain/metrics?points=1441"), 400, "bad_request", "points 1441")
    s, body = call(base, "/api/queues/plain/metrics?points=5")
    check(s == 200 and body["completed"]["count"] == 0 and body["failed"]["data"] == [], body)
    expect(call(base, "/api/queues/plain/jobs/p1/retry", "POST", w), 409, "invalid",
           "retry of a waiting job")
    expect(call(base, "/api/queues/plain/jobs/p1/promote", "POST", w), 409, "invalid",
           "promote of a waiting job")
    expect(call(base, "/api/queues/plain/jobs/p1/retry"), 404, "not_found", "GET of an action")
    expect(call(base, "/api/queues/plain/jobs/p1/explode", "POST", w), 404, "not_found",
           "unknown action")
    expect(call(base, "/api/queues/plain/clean?state=active", "POST", w), 400, "bad_request",
           "clean of active")
    expect(call(base, "/api/queues/plain/pause", "DELETE", w), 405, "method_not_allowed",
           "DELETE")
    expect(call(base, "/api/nothing"), 404, "not_found", "unknown endpoint")
    expect(call(base, "/nothing.html"), 404, "not_found", "unknown page")
    expect(call(base, "/api/queues/plain/pause", "POST"), 403, "forbidden",
           "loopback write without X-Lanes-Dash")
    expect(call(base, "/api/info", headers={"Host": "evil.example:80"}), 403, "bad_host",
           "a foreign Host header")
    expect(call(base, "/api/queues/plain/pause", "POST", w), 200, None, "pause")
    check(lanes("jobs", url, "counts", "plain", "--json").find('"paused":1') >= 0)
    s, body = call(base, "/api/queues/plain")
    check(body["paused"] is True, body)
    expect(call(base, "/api/queues/plain/resume", "POST", w), 200, None, "resume")
    expect(call(base, "/api/queues/plain/clean?state=completed", "POST", w), 200, None,
           "clean completed")
    s, body = call(base, "/api/queues/plain/jobs?q=p1")
    check([j["id"] for j in body["search"]["id_match"]] == ["p1"], body)
    s, body = call(base, "/api/queues/plain/workers")
    expect((s, body), 200, None, "workers of a queue nobody works")
    check(body == {"queue": "plain", "workers": []}, body)
    expect(call(base, "/api/queues/a%3Ab/workers"), 409, "invalid", "workers of a bad name")
    expect(call(base, "/api/queues/plain/workers", "POST", w), 404, "not_found", "POST workers")
    qs = urllib.parse.quote(SLASHY, safe="")
    got = call(base, "/api/queues/" + qs + "/jobs/" + urllib.parse.quote(LONG_ID, safe=""))
    expect(got, 200, None, "a job with a 3002-byte id")
    check(got[1]["id"] == LONG_ID, got)
    s, body = call(base, "/api/queues/plain/schedulers")
    check(s == 200 and [(x["id"], x["pattern"]) for x in body["schedulers"]] == \
        [("sch", "0 0 1 1 *")], body)
    expect(call(base, "/api/queues/" + qs + "/schedulers"), 200, None, "no schedulers")
    rm = "/api/queues/plain/schedulers/sch/remove"
    expect(call(base, rm, "POST"), 403, "forbidden", "remove a scheduler without X-Lanes-Dash")
    expect(call(base, "/api/queues/plain/schedulers/sch/explode", "POST", w), 404, "not_found",
           "unknown scheduler action")
    expect(call(base, rm, "POST", w), 200, None, "remove a scheduler")
    check("sch" not in lanes("jobs", url, "schedules", "plain"))
    check(call(base, "/api/queues/plain/schedulers")[1]["schedulers"] == [])
    expect(call(base, rm, "POST", w), 404, "not_found", "remove it again")


run_.main(main)
