#!/usr/bin/env python3
"""test_bench_cli.py - `lanes bench` end to end (python3 standard library only).

    test_bench_cli.py PATH/TO/lanes

Runs `lanes bench --quick --repeats 1` for every experiment into a temporary
directory, then checks every JSON file written against the results schema
(cli/bench_json.h, docs/experiments.md: field names and types; the checker is shown to fail on broken copies),
every SVG for well-formed XML, the report, and the command line's failure
modes: unknown experiment, bad flags, an unwritable --out, node missing from
PATH, peers without node_modules, --no-peers. Never asserts a timing.

The bullmq experiment needs Redis: LANES_TEST_REDIS_URL (passed on as
LANES_BENCH_REDIS_URL), else a redis-server on PATH, which the experiment
starts itself. Without either it is left out and said so; with it, its
targets, its lanes-only fallback, an unreachable server and the stop of its
own redis-server on SIGINT are checked too.
"""
import copy
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

HEX64 = re.compile(r"^[0-9a-f]{64}$")
ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, file=sys.stderr)
    return cond


def children(pid, name):
    """Pids of the live processes called name whose parent is pid."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8", errors="replace") as f:
                stat = f.read()
        except OSError:
            continue
        comm = stat[stat.find("(") + 1:stat.rfind(")")]
        fields = stat[stat.rfind(")") + 2:].split()
        if comm == name and fields and fields[0] != "Z" and int(fields[1]) == pid:
            found.append(int(entry))
    return found


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as f:
            stat = f.read()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2:].split()[0] != "Z"


STARTED = time.monotonic()


def run(lanes, *args, env=None):
    # Each run is logged as it starts, so that a test stopped by CTest's
    # timeout shows which run it was in and how long the ones before took.
    print(f"[{time.monotonic() - STARTED:6.1f} s] lanes bench {' '.join(args)}", flush=True)
    proc = subprocess.run([lanes, "bench", *args], capture_output=True, text=True,
                          env=env, timeout=600)
    # A negative return code is a signal: a crash, never acceptable.
    check(proc.returncode >= 0, f"bench {' '.join(args)}: killed by signal {-proc.returncode}")
    return proc


# ------------------------------------------------------------- the schema
def is_num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def is_str(v):
    return isinstance(v, str)


def is_text(v):
    return isinstance(v, dict) and is_str(v.get("ko")) and is_str(v.get("en"))


def schema_errors(doc):
    """Everything wrong with doc as a results document (plus lanes' additions)."""
    errs = []

    def need(obj, key, pred, where):
        if not isinstance(obj, dict) or key not in obj:
            errs.append(f"{where}.{key} missing")
            return None
        if not pred(obj[key]):
            errs.append(f"{where}.{key} has the wrong type: {obj[key]!r:.60}")
            return None
        return obj[key]

    need(doc, "schemaVersion", lambda v: is_int(v) and v == 1, "")
    slug = need(doc, "slug", is_str, "")
    tool = need(doc, "tool", lambda v: isinstance(v, dict), "")
    for k in ("name", "repo", "version"):
        need(tool, k, is_str, "tool")
    env = need(doc, "environment", lambda v: isinstance(v, dict), "")
    for k in ("arch", "cpu", "os", "runtime"):
        need(env, k, is_str, "environment")
    need(env, "memMB", is_int, "environment")
    method = need(doc, "method", lambda v: isinstance(v, dict), "")
    need(method, "hypothesis", is_str, "method")
    need(method, "conditions", lambda v: isinstance(v, list) and all(map(is_str, v)), "method")
    repeats = need(method, "repeats", is_int, "method")
    need(doc, "script", is_str, "")
    need(doc, "scriptSha256", lambda v: is_str(v) and HEX64.match(v), "")
    runs = need(doc, "runs", lambda v: isinstance(v, list), "") or []
    if repeats is not None and len(runs) != repeats:
        errs.append(f"runs has {len(runs)} entries, method.repeats is {repeats}")
    for i, r in enumerate(runs):
        need(r, "run", is_int, f"runs[{i}]")
        need(r, "wallMs", is_num, f"runs[{i}]")
        for k, v in (r.items() if isinstance(r, dict) else []):
            if not is_num(v):
                errs.append(f"runs[{i}].{k} is not a number")
    summary = need(doc, "summary", lambda v: isinstance(v, dict), "") or {}
    need(summary, "speedup", is_num, "summary")
    figures = {k: v for k, v in summary.items() if k != "speedup"}
    if not figures:
        errs.append("summary has no figures")
    for k, st in figures.items():
        for f in ("median", "min", "max"):
            need(st, f, is_num, f"summary.{k}")
        need(st, "unit", is_str, f"summary.{k}")
        need(st, "better", lambda v: v in ("lower", "higher"), f"summary.{k}")
        if isinstance(st, dict) and all(is_num(st.get(f)) for f in ("median", "min", "max")):
            if not st["min"] <= st["median"] <= st["max"]:
                errs.append(f"summary.{k}: median outside min..max")
    for i, r in enumerate(runs):
        for k in (r if isinstance(r, dict) else {}):
            if k not in ("run", "wallMs") and k not in figures:
                errs.append(f"runs[{i}].{k} has no summary")
    chart = need(doc, "chart", lambda v: isinstance(v, dict), "") or {}
    need(chart, "title", is_text, "chart")
    series = need(chart, "series", lambda v: isinstance(v, list), "chart") or []
    ids = set()
    for i, s in enumerate(series):
        ids.add(need(s, "id", is_str, f"chart.series[{i}]"))
        need(s, "role", lambda v: v in ("target", "baseline", "reference"), f"chart.series[{i}]")
        need(s, "label", is_text, f"chart.series[{i}]")
        need(s, "short", is_text, f"chart.series[{i}]")
    panels = need(chart, "panels", lambda v: isinstance(v, list) and v, "chart") or []
    for i, p in enumerate(panels):
        where = f"chart.panels[{i}]"
        need(p, "title", is_text, where)
        need(p, "unit", is_str, where)
        need(p, "kind", is_str, where)
        need(p, "better", lambda v: v in ("lower", "higher"), where)
        keys = need(p, "keys", lambda v: isinstance(v, dict) and v, where) or {}
        for sid, fig in keys.items():
            if sid not in ids:
                errs.append(f"{where}.keys: unknown series {sid}")
            if fig not in figures:
                errs.append(f"{where}.keys.{sid}: figure {fig} not in summary")
    need(doc, "createdAt", lambda v: is_str(v) and ISO.match(v), "")
    claim = need(doc, "claim", lambda v: isinstance(v, dict), "")
    need(claim, "quote", is_str, "claim")
    need(claim, "url", is_str, "claim")
    need(claim, "numbers", lambda v: isinstance(v, list) and all(map(is_num, v)), "claim")
    # lanes' additions
    need(doc, "lanesOnly", lambda v: isinstance(v, bool), "")
    need(doc, "peer", lambda v: v is None or isinstance(v, dict), "")
    comps = need(doc, "comparisons", lambda v: isinstance(v, list) and v, "") or []
    if sum(1 for c in comps if isinstance(c, dict) and c.get("headline") is True) != 1:
        errs.append("comparisons: not exactly one headline")
    for i, c in enumerate(comps):
        need(c, "what", is_str, f"comparisons[{i}]")
        need(c, "direction", is_str, f"comparisons[{i}]")
        need(c, "ratio", lambda v: v is None or is_num(v), f"comparisons[{i}]")
    need(doc, "limits", lambda v: isinstance(v, list) and all(map(is_str, v)), "")
    need(doc, "errors", lambda v: isinstance(v, list), "")
    if is_str(slug) and not errs and doc["errors"]:
        errs.append(f"{slug}: errors recorded: {doc['errors']}")
    return errs


def median(values):
    v = sorted(values)
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def stats_errors(doc):
    """The summary and the comparisons must follow from the raw runs."""
    errs = []
    runs, summary = doc["runs"], doc["summary"]
    for key, st in summary.items():
        if key == "speedup":
            continue
        vals = [r[key] for r in runs if key in r]
        for what, want in (("median", median(vals)), ("min", min(vals)), ("max", max(vals))):
            if abs(st[what] - want) > 1e-6 * max(1.0, abs(want)):
                errs.append(f"summary.{key}.{what} is {st[what]}, the runs give {want}")
    headline = [c for c in doc["comparisons"] if c.get("headline")]
    for c in doc["comparisons"]:
        t, b = summary.get(c["target"]), summary.get(c["baseline"])
        if not t or not b:
            if c["ratio"] is not None:
                errs.append(f"comparison {c['what']!r}: a ratio without both figures")
            continue
        lower = t.get("better") == "lower"
        want = b["median"] / t["median"] if lower else t["median"] / b["median"]
        if abs(c["ratio"] - want) > 1e-4 * want:
            errs.append(f"comparison {c['what']!r}: ratio {c['ratio']}, medians give {want}")
    if headline and abs(summary["speedup"] - headline[0]["ratio"]) > 1e-9:
        errs.append("summary.speedup is not the headline comparison's ratio")
    return errs


def check_schema_can_fail(doc):
    """The checker must reject a document with a field missing or mistyped."""
    breakages = [
        ("environment.memMB deleted", lambda d: d["environment"].pop("memMB")),
        ("summary.speedup deleted", lambda d: d["summary"].pop("speedup")),
        ("scriptSha256 deleted", lambda d: d.pop("scriptSha256")),
        ("claim.numbers deleted", lambda d: d["claim"].pop("numbers")),
        ("runs[0].wallMs deleted", lambda d: d["runs"][0].pop("wallMs")),
        ("chart.panels[0].unit deleted", lambda d: d["chart"]["panels"][0].pop("unit")),
        ("schemaVersion as a string", lambda d: d.__setitem__("schemaVersion", "1")),
        ("method.repeats as a float", lambda d: d["method"].__setitem__("repeats", 1.5)),
    ]
    for what, breaker in breakages:
        broken = copy.deepcopy(doc)
        breaker(broken)
        check(schema_errors(broken), f"schema check accepted a broken copy: {what}")


def check_outputs(out, names, expect_lanes_only=None):
    docs = {}
    for name in names:
        path = os.path.join(out, name + ".json")
        if not check(os.path.exists(path), f"{path} not written"):
            continue
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
        docs[name] = doc
        errs = schema_errors(doc)
        for e in errs or stats_errors(doc):
            check(False, f"{name}.json: {e}")
        if expect_lanes_only is not None:
            check(doc.get("lanesOnly") is expect_lanes_only,
                  f"{name}.json: lanesOnly is {doc.get('lanesOnly')}, want {expect_lanes_only}")
        svg = os.path.join(out, name + ".svg")
        try:
            root = ET.parse(svg).getroot()
            check(root.tag == "{http://www.w3.org/2000/svg}svg", f"{svg}: root is {root.tag}")
            texts = " ".join(t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}text"))
            for panel in doc["chart"]["panels"]:
                check(panel["title"]["en"] in texts, f"{svg}: no title for a panel")
                check(f"{panel['kind']} ({panel['unit']}" in texts, f"{svg}: no axis label")
        except (ET.ParseError, OSError) as e:
            check(False, f"{svg}: not well-formed XML: {e}")
    report = os.path.join(out, "README.md")
    if check(os.path.exists(report), "README.md not written"):
        text = open(report, encoding="utf-8").read()
        for name in names:
            check(f'<a id="{name}"></a>' in text, f"README.md has no section for {name}")
    return docs


def check_bullmq(lanes, tmp, doc, out, bench_env, have_node, own_server):
    """The bullmq experiment: targets said honestly, its fallbacks, its server."""
    report = open(os.path.join(out, "README.md"), encoding="utf-8").read()
    comps = {c["target"]: c for c in doc["comparisons"]}
    src = os.environ.get("LANES_SOURCE_DIR", "")
    installed = os.path.exists(os.path.join(src, "tests", "interop", "node_modules", "bullmq",
                                            "package.json"))
    if have_node and installed:
        check(doc["peer"]["status"] == "ran" and not doc["lanesOnly"],
              f"bullmq: peer {doc['peer']['status']}: {doc['peer']['reason']}")
    if not doc["lanesOnly"]:
        for key, need in (("lanesWorkerJobsPerSec", 3), ("lanesAddJobsPerSec", 2)):
            c = comps.get(key, {})
            check(c.get("kind") == "target" and c.get("publishedRatio") == need,
                  f"bullmq: {key} is not a {need}x target: {c}")
            if not is_num(c.get("ratio")):
                check(False, f"bullmq: {key}: no ratio")
                continue
            met = c["ratio"] >= need
            check(c["direction"] == ("target met" if met else "target missed"),
                  f"bullmq: {key}: ratio {c['ratio']} but direction {c['direction']}")
            said = f"meets the {need:.2f}x target" if met else f"MISSES the {need:.2f}x target"
            check(said in report, f"bullmq: report does not say '{said}'")
        check(comps.get("lanesWorkerJobsPerSec", {}).get("headline") is True,
              "bullmq: the worker comparison is not the headline")

    # node missing: lanes only, exit 0, a headline all the same.
    out2 = os.path.join(tmp, "bullmq-no-node")
    env = dict(bench_env, LANES_NODE=os.path.join(tmp, "no-such-node"))
    p = run(lanes, "bullmq", "--quick", "--repeats", "1", "--out", out2, env=env)
    check(p.returncode == 0 and "LANES_NODE is not an executable" in p.stderr,
          f"bullmq without node: exit {p.returncode}: {p.stderr[-300:]!r}")
    d = check_outputs(out2, ["bullmq"], expect_lanes_only=True).get("bullmq")
    if d:
        check(not any(k.startswith("bullmq") for k in d["summary"]),
              "bullmq: peer figures invented")
        head = [c for c in d["comparisons"] if c["headline"]]
        check(head and head[0]["target"] == "lanesBulkJobsPerSec", "bullmq lanes-only headline")

    # An unreachable server: exit 1, said plainly, the JSON still written.
    out3 = os.path.join(tmp, "bullmq-bad-url")
    env = dict(bench_env, LANES_BENCH_REDIS_URL="redis://127.0.0.1:1/0")
    p = run(lanes, "bullmq", "--quick", "--repeats", "1", "--no-peers", "--out", out3, env=env)
    check(p.returncode == 1 and "cannot use LANES_BENCH_REDIS_URL=redis://127.0.0.1:1/0"
          in p.stderr, f"bullmq, bad URL: exit {p.returncode}: {p.stderr[-300:]!r}")
    try:
        with open(os.path.join(out3, "bullmq.json"), encoding="utf-8") as f:
            check(json.load(f)["errors"], "bullmq, bad URL: no error recorded")
    except (OSError, ValueError, KeyError) as e:
        check(False, f"bullmq, bad URL: no usable JSON: {e}")

    # Its own redis-server dies with lanes: SIGINT to lanes alone.
    if not own_server:
        return
    env = dict(bench_env)
    env.pop("LANES_BENCH_REDIS_URL", None)
    proc = subprocess.Popen([lanes, "bench", "bullmq", "--no-peers", "--out",
                             os.path.join(tmp, "bullmq-sigint")], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    servers = []
    deadline = time.monotonic() + 30
    while not servers and proc.poll() is None and time.monotonic() < deadline:
        servers = children(proc.pid, "redis-server")
        time.sleep(0.02)
    if not check(servers, "bullmq: no redis-server child seen"):
        proc.kill()
        proc.wait()
        return
    time.sleep(0.3)  # let it get into the runs
    proc.send_signal(signal.SIGINT)
    proc.wait(timeout=30)
    deadline = time.monotonic() + 10
    while alive(servers[0]) and time.monotonic() < deadline:
        time.sleep(0.05)
    if not check(not alive(servers[0]), "bullmq: redis-server outlived lanes after SIGINT"):
        os.kill(servers[0], signal.SIGKILL)


def check_usage_errors(lanes, tmp):
    """Command-line errors: a clear message, exit 2 (usage) or 3 (unavailable)."""
    p = run(lanes, "nosuch", "--out", tmp)
    check(p.returncode == 2 and "unknown experiment 'nosuch'" in p.stderr
          and "fixedqueue" in p.stderr, f"unknown experiment: {p.returncode} {p.stderr!r}")
    p = run(lanes, "--bogus")
    check(p.returncode == 2 and "unknown option '--bogus'" in p.stderr, f"bad flag: {p.stderr!r}")
    for bad in ("0", "abc", "-3", "1001", ""):
        p = run(lanes, "--repeats", bad, "--out", tmp)
        check(p.returncode == 2 and "--repeats" in p.stderr, f"--repeats {bad!r}: {p.returncode}")
    p = run(lanes, "--out")
    check(p.returncode == 2 and "--out" in p.stderr, "--out without a value")
    blocker = os.path.join(tmp, "a-file")
    open(blocker, "w").close()
    p = run(lanes, "fixedqueue", "--quick", "--repeats", "1", "--out",
            os.path.join(blocker, "sub"))
    check(p.returncode == 3 and "output directory unusable" in p.stderr,
          f"unwritable --out: {p.returncode} {p.stderr!r}")


def check_quick_run(lanes, tmp, names, runnable, bench_env, own_redis):
    """Every experiment, quick, with the peers if node is here. stderr is a
    pipe, so no progress line may appear."""
    out = os.path.join(tmp, "all")
    # A ./results in the working directory must stay untouched when --out
    # names another directory (writepath once drew its waterfalls there).
    decoy = os.path.join(tmp, "results")
    os.makedirs(decoy, exist_ok=True)
    p = run(lanes, *([] if runnable == names else runnable), "--quick", "--repeats", "1",
            "--out", out, env=bench_env)
    check(p.returncode == 0, f"quick run exit {p.returncode}: {p.stderr}")
    check(os.listdir(decoy) == [], f"--out {out} also wrote into ./results: {os.listdir(decoy)}")
    if "writepath" in runnable:
        check(os.path.exists(os.path.join(out, "waterfall-async.svg")),
              "writepath's waterfalls are not beside its JSON")
    check("\r" not in p.stderr, "progress line written to a non-terminal")
    for name in runnable:
        check(re.search(rf"^{name}\s", p.stdout, re.M), f"summary table lacks {name}")
    docs = check_outputs(out, runnable)
    if "fixedqueue" in docs:
        check_schema_can_fail(docs["fixedqueue"])
        text = open(os.path.join(out, "README.md"), encoding="utf-8").read()
        check("ArrayTaskQueue" in text and "README's comparison" in text,
              "report does not name the README's comparison")
    have_node = subprocess.run(["sh", "-c", "command -v node"], capture_output=True).returncode == 0
    if "bullmq" in docs:
        check_bullmq(lanes, tmp, docs["bullmq"], out, bench_env, have_node, own_redis)
    if have_node and "fixedqueue" in docs and not docs["fixedqueue"]["lanesOnly"]:
        peer = docs["fixedqueue"]["peer"]
        check(peer["status"] == "ran" and HEX64.match(peer["scriptSha256"]), "peer ran, hashed")
    return have_node


def check_no_node(lanes, tmp, base_env):
    """Node missing from PATH: lanes-only results, marked, exit 0."""
    out2 = os.path.join(tmp, "no-node")
    env = dict(base_env, PATH=os.path.join(tmp, "empty-bin"))
    env.pop("LANES_NODE", None)
    p = run(lanes, "fixedqueue", "--quick", "--repeats", "1", "--out", out2, env=env)
    check(p.returncode == 0, f"no node: exit {p.returncode}: {p.stderr}")
    check("node (Node.js) not found on PATH" in p.stderr, f"no node: message {p.stderr!r}")
    check("lanes only" in p.stdout, "no node: table does not say lanes only")
    doc = check_outputs(out2, ["fixedqueue"], expect_lanes_only=True).get("fixedqueue")
    if doc:
        check(doc["peer"]["status"] == "skipped" and "node" in doc["peer"]["reason"],
              f"no node: peer {doc['peer']['status']} {doc['peer']['reason']}")
        check(not any(k.startswith("piscina") for k in doc["summary"]), "peer figures invented")
        check("lanes only" in open(os.path.join(out2, "README.md"), encoding="utf-8").read(),
              "no node: report does not say lanes only")


def check_broken_peers(lanes, tmp, base_env):
    """Peers without their scripts / node_modules; a peer that fails: exit 1,
    the failure recorded, the lanes figures kept."""
    out3 = os.path.join(tmp, "no-modules")
    env = dict(base_env, LANES_PEERS_DIR=os.path.join(tmp, "empty-peers"))
    os.makedirs(env["LANES_PEERS_DIR"])
    p = run(lanes, "fixedqueue", "--quick", "--repeats", "1", "--out", out3, env=env)
    check(p.returncode == 0, f"no node_modules: exit {p.returncode}")
    doc = check_outputs(out3, ["fixedqueue"], expect_lanes_only=True).get("fixedqueue")
    check(doc and "not found" in (doc["peer"]["reason"] or ""), "no node_modules: reason")
    bad = os.path.join(tmp, "failing-peers")
    os.makedirs(os.path.join(bad, "node_modules", "piscina"))
    with open(os.path.join(bad, "node_modules", "piscina", "package.json"), "w") as f:
        f.write('{"version": "5.3.2"}')
    with open(os.path.join(bad, "piscina.mjs"), "w") as f:
        f.write('throw new Error("peer broke on purpose");\n')
    open(os.path.join(bad, "piscina-worker.mjs"), "w").close()
    out5 = os.path.join(tmp, "failing")
    p = run(lanes, "fixedqueue", "--quick", "--repeats", "1", "--out", out5,
            env=dict(base_env, LANES_PEERS_DIR=bad))
    check(p.returncode == 1 and "peer broke on purpose" in p.stderr,
          f"failing peer: exit {p.returncode}, {p.stderr[-200:]!r}")
    try:
        with open(os.path.join(out5, "fixedqueue.json"), encoding="utf-8") as f:
            doc = json.load(f)
        check(doc["peer"]["status"] == "failed" and doc["errors"], "failing peer: not recorded")
        check("lanesRing1Ms" in doc["summary"], "failing peer: lanes figures lost")
    except (OSError, ValueError, KeyError) as e:
        check(False, f"failing peer: no usable JSON: {e}")


def check_no_peers(lanes, tmp):
    """--no-peers with --json: a JSON summary, lanes-only results."""
    out4 = os.path.join(tmp, "no-peers")
    p = run(lanes, "fixedqueue", "--quick", "--repeats", "1", "--no-peers", "--json",
            "--out", out4)
    check(p.returncode == 0, f"--no-peers --json: exit {p.returncode}")
    try:
        summary = json.loads(p.stdout)
        check(summary["ok"] is True and summary["experiments"][0]["lanesOnly"] is True,
              "--json summary")
    except (ValueError, KeyError, IndexError) as e:
        check(False, f"--json did not print a JSON summary: {e}")
    check_outputs(out4, ["fixedqueue"], expect_lanes_only=True)


def main():
    lanes = os.path.abspath(sys.argv[1])
    base_env = dict(os.environ)
    tmp = tempfile.mkdtemp(prefix="lanes-bench-test.")
    # Work in tmp: an experiment that finds ./results (writepath's waterfalls)
    # must not write into the caller's directory, e.g. the source tree.
    if base_env.get("LANES_SOURCE_DIR"):
        base_env["LANES_SOURCE_DIR"] = os.path.abspath(base_env["LANES_SOURCE_DIR"])
        os.environ["LANES_SOURCE_DIR"] = base_env["LANES_SOURCE_DIR"]
    start_dir = os.getcwd()
    os.chdir(tmp)

    # --help and --list
    p = run(lanes, "--help")
    check(p.returncode == 0 and "usage: lanes bench" in p.stdout, "--help")
    names = [line.split()[0] for line in run(lanes, "--list").stdout.splitlines() if line.strip()]
    check({"fixedqueue", "rails", "starvation", "bullmq"} <= set(names), f"--list gives {names}")

    # Redis for the bullmq experiment: a given server, or its own.
    redis_url = base_env.get("LANES_BENCH_REDIS_URL") or base_env.get("LANES_TEST_REDIS_URL")
    have_redis_server = shutil.which("redis-server") is not None
    bench_env = dict(base_env)
    bench_env.pop("LANES_BENCH_REDIS_URL", None)
    if redis_url:
        bench_env["LANES_BENCH_REDIS_URL"] = redis_url
    have_redis = bool(redis_url) or have_redis_server
    runnable = names if have_redis else [n for n in names if n != "bullmq"]
    if not have_redis:
        print("skipped [redis]: bullmq: neither LANES_TEST_REDIS_URL nor redis-server on PATH",
              file=sys.stderr)

    check_usage_errors(lanes, tmp)
    have_node = check_quick_run(lanes, tmp, names, runnable, bench_env,
                                have_redis_server and not redis_url)
    check_no_node(lanes, tmp, base_env)
    if have_node:
        check_broken_peers(lanes, tmp, base_env)
    check_no_peers(lanes, tmp)

    os.chdir(start_dir)
    subprocess.run(["rm", "-rf", tmp])
    if failures:
        print(f"{len(failures)} check(s) failed", file=sys.stderr)
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
