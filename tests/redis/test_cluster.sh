#!/bin/sh
# test_cluster.sh CASE PEER LANES - lanes' Redis store on a local Redis
# Cluster of 3 masters and 3 replicas (scripts/with-services.sh starts it:
# LANES_TEST_REDIS_CLUSTER_URL, LANES_TEST_REDIS_CLUSTER_PORTS). PEER is
# build/tests/redis_peer, LANES the `lanes` CLI. Every URL given to lanes
# names a node that does NOT own the queue's slot, so each case also checks
# that lanes routes to the owner.
#
#   tag        a prefix without a hash tag is refused with a clear LN_EINVAL
#              ("the prefix must be a hash tag like {bull}"), not CROSSSLOT;
#              a tag in the queue name works; a database other than 0 is
#              refused at open
#   node_to_c  BullMQ (ioredis Cluster, prefix '{bull}') adds 200 jobs; a C
#              worker runs all of them exactly once
#   c_to_node  the C API adds 200 jobs; a BullMQ Worker on the cluster runs
#              all of them exactly once
#   failover   2,000 jobs, a C worker (concurrency 4), and CLUSTER FAILOVER
#              on the owning master's replica mid-run: every job completes
#              exactly once and the worker finishes on the new master
#   kill       the same with kill -9 of the owning master: every job
#              completes (at least once: unreplicated writes may be lost),
#              then the killed node is restarted and rejoins as a replica
#   kill_short_lease  the same with a 3 s lease, shorter than the
#              failover, and the default store-retry window: the worker
#              rides the failover out and finishes every job
#   wait_replicas  --wait-replicas N on `lanes jobs add` and `lanes
#              worker`: an add returns once the replica has the job, and
#              fails (exit 3, LN_EIO) after wait_timeout_ms with the
#              replica stopped (SIGSTOP); a worker's unconfirmed outcomes
#              stand, with a warning line
#   moved      the queue's slot is migrated to another master (CLUSTER
#              SETSLOT MIGRATING/IMPORTING, MIGRATE, SETSLOT NODE) under a
#              running C worker, between two adds: the worker follows MOVED
#              and runs the jobs added after the move
#   ask        with the slot of a fresh queue half-migrated (MIGRATING on
#              the owner, IMPORTING on the target, no keys moved yet), lanes
#              follows ASK: its jobs are written on the importing node
#
# Exit 77 (skipped) without the cluster (redis-server without cluster
# support) or, for the BullMQ cases, without node and the npm packages.
set -u
what=$1
peer=$2
cli=$3
here=$(cd "$(dirname "$0")" && pwd)
interop=$here/../interop

[ -n "${LANES_TEST_REDIS_CLUSTER_URL:-}" ] ||
    { echo "skipped [redis-cluster]: LANES_TEST_REDIS_CLUSTER_URL not set (no redis-server with cluster support)"; exit 77; }
case $what in node_to_c | c_to_node)
    command -v node >/dev/null 2>&1 || { echo "skipped [node]: node not installed"; exit 77; }
    [ -d "$interop/node_modules/bullmq" ] || { echo "skipped [node]: no tests/interop/node_modules"; exit 77; }
esac

ports=$LANES_TEST_REDIS_CLUSTER_PORTS
tmp=$(mktemp -d "${TMPDIR:-/tmp}/lanes-cluster.XXXXXX")
pids=""
tag="{cl$$$what}" # this run's prefix: one slot, runs never meet
qn="q$$"          # this run's queue under BullMQ's shared prefix {bull}

cleanup() {
    for p in $pids; do kill "$p" 2>/dev/null; done
    for p in $ports; do
        for pat in "$tag*" "{bull}:$qn:*"; do
            redis-cli -p "$p" --scan --pattern "$pat" 2>/dev/null |
                xargs -r -n 500 redis-cli -p "$p" del >/dev/null 2>&1
        done
    done
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

fail() {
    echo "FAIL ($what): $*" >&2
    exit 1
}

# topo KEY: "OWNER OTHER REPLICA" - the port of the master owning KEY's
# slot, of another master, and of the owner's replica (CLUSTER NODES).
topo() {
    p1=$(echo $ports | cut -d' ' -f1)
    slot=$(redis-cli -p "$p1" cluster keyslot "$1")
    redis-cli -p "$p1" cluster nodes | python3 -c '
import sys
slot = int(sys.argv[1])
nodes = [l.split() for l in sys.stdin if l.strip()]
port = lambda n: n[1].split("@")[0].rsplit(":", 1)[1]
owner = other = None
for n in nodes:
    if "master" not in n[2]: continue
    mine = False
    for r in n[8:]:
        if r.startswith("["): continue
        lo, _, hi = r.partition("-")
        if int(lo) <= slot <= int(hi or lo): mine = True
    if mine: owner = n
    elif other is None: other = n
rep = [n for n in nodes if "slave" in n[2] and n[3] == owner[0]]
print(port(owner), port(other), port(rep[0]) if rep else "-", owner[0], other[0])
' "$slot"
}

set -- $(topo "$tag")
owner=$1 other=$2 replica=$3 owner_id=$4 other_id=$5
[ "$replica" != - ] || fail "no replica for the owner of $tag"
url="redis://127.0.0.1:$other/0?prefix=$tag" # a node that does not own the slot
slot=$(redis-cli -p "$owner" cluster keyslot "$tag")

# once LOG N: LOG has N lines, all different
once() {
    n=$(wc -l <"$1")
    u=$(sort -u "$1" | wc -l)
    [ "$n" -eq "$2" ] && [ "$u" -eq "$2" ] || fail "$n runs of $u distinct jobs, want $2 exactly once"
}

wait_log() { # wait_log N: the worker's log has N lines (within 30 s)
    i=0
    until [ "$(cat "$tmp/log" 2>/dev/null | wc -l)" -ge "$1" ]; do
        i=$((i + 1))
        [ $i -gt 600 ] && fail "only $(wc -l <"$tmp/log") of $1 jobs ran: $(cat "$tmp/peer.err")"
        sleep 0.05
    done
}

# kill_owner: kill -9 the master owning the slot. restart_owner: start
# it again from its directory if it is down (it rejoins as a replica of
# the node that took over); rejoined: wait until it replicates again.
kill_owner() {
    opid=$(redis-cli -p "$owner" info server | tr -d '\r' | sed -n 's/^process_id://p')
    kill -9 "$opid" || fail "kill -9 the owner"
}
restart_owner() {
    d="$dir/cluster-$owner"
    redis-cli -p "$owner" ping >/dev/null 2>&1 && return 0
    (cd "$d" && exec redis-server --cluster-enabled yes --cluster-config-file "$d/nodes.conf" \
        --cluster-node-timeout 2000 --port "$owner" --bind 127.0.0.1 --save "" \
        --appendonly no --dir "$d" --daemonize yes --logfile "$d/redis.log" --loglevel warning)
}
rejoined() {
    i=0
    until redis-cli -p "$owner" info replication 2>/dev/null | grep -q 'master_link_status:up'; do
        i=$((i + 1)); [ $i -gt 300 ] && fail "the restarted node did not rejoin"; sleep 0.1
    done
}

completed() { # completed QUEUE N
    "$cli" jobs "$url" counts "$1" --json >"$tmp/counts.json" || fail "counts $1"
    grep -q "\"completed\":$2[,}]" "$tmp/counts.json" || fail "counts of $1: $(cat "$tmp/counts.json")"
}

case $what in
tag)
    bad="redis://127.0.0.1:$other/0?prefix=cl$$"
    "$cli" jobs "$bad" add q n '{}' >/dev/null 2>"$tmp/err" && fail "an untagged prefix was accepted"
    grep -q 'LN_EINVAL' "$tmp/err" && grep -q 'prefix must be a hash tag like {bull}' "$tmp/err" ||
        fail "unclear error: $(cat "$tmp/err")"
    grep -q CROSSSLOT "$tmp/err" && fail "CROSSSLOT reached the user: $(cat "$tmp/err")"
    # A tag in the queue name is enough (BullMQ's other cluster recipe).
    "$cli" jobs "$bad" add "$tag" n '{}' >/dev/null || fail "tagged queue name refused"
    "$cli" jobs "$bad" counts "$tag" --json | grep -q '"waiting":1' || fail "tagged queue name: no job"
    for p in $ports; do # clean that key set too (prefix cl$$, queue $tag)
        redis-cli -p "$p" --scan --pattern "cl$$:*" 2>/dev/null |
            xargs -r -n 500 redis-cli -p "$p" del >/dev/null 2>&1
    done
    "$cli" jobs "redis://127.0.0.1:$other/2?prefix=$tag" counts q >/dev/null 2>"$tmp/err" &&
        fail "database 2 was accepted on a cluster"
    grep -q 'database must be 0' "$tmp/err" || fail "unclear db error: $(cat "$tmp/err")"
    echo "untagged prefix and db 2 refused clearly; a tagged queue name works"
    ;;
node_to_c)
    set -- $(topo "{bull}")
    (cd "$interop" && LANES_TEST_REDIS_CLUSTER_URL="redis://127.0.0.1:$2/0" \
        node cluster.mjs add "$qn" 200 >/dev/null) || fail "BullMQ add"
    burl="redis://127.0.0.1:$2/0?prefix={bull}"
    "$peer" work "$burl" "$qn" --concurrency 4 --log "$tmp/log" >"$tmp/peer.json" || fail "C worker"
    once "$tmp/log" 200
    "$cli" jobs "$burl" counts "$qn" --json | grep -q '"completed":200[,}]' || fail "counts"
    echo "200 jobs BullMQ added on the cluster ran once each on a C worker given a non-owner node"
    ;;
c_to_node)
    set -- $(topo "{bull}")
    burl="redis://127.0.0.1:$2/0?prefix={bull}"
    "$peer" bulk "$burl" "$qn" 200 >/dev/null || fail "C add"
    (cd "$interop" && LANES_TEST_REDIS_CLUSTER_URL="redis://127.0.0.1:$2/0" \
        node cluster.mjs work "$qn" 200 "$tmp/log" >/dev/null) || fail "BullMQ worker"
    once "$tmp/log" 200
    "$cli" jobs "$burl" counts "$qn" --json | grep -q '"completed":200[,}]' || fail "counts"
    echo "200 jobs the C API added through a non-owner node ran once each on a BullMQ Worker"
    ;;
failover)
    "$peer" bulk "$url" q 2000 sleep >/dev/null || fail "C add"
    "$peer" work "$url" q --concurrency 4 --sleep-ms 3 --log "$tmp/log" >"$tmp/peer.json" 2>"$tmp/peer.err" &
    wpid=$!
    pids="$wpid"
    i=0
    until [ "$(wc -l <"$tmp/log" 2>/dev/null || echo 0)" -ge 300 ]; do
        i=$((i + 1)); [ $i -gt 300 ] && fail "the worker did not start"; sleep 0.05
    done
    redis-cli -p "$replica" cluster failover >/dev/null || fail "CLUSTER FAILOVER"
    i=0
    until redis-cli -p "$replica" role | head -1 | grep -q master; do
        i=$((i + 1)); [ $i -gt 200 ] && fail "no failover"; sleep 0.05
    done
    before=$(wc -l <"$tmp/log")
    wait "$wpid" || fail "C worker: $(cat "$tmp/peer.err")"
    pids=""
    [ "$before" -lt 2000 ] || fail "the run ended before the failover ($before jobs)"
    once "$tmp/log" 2000
    completed q 2000
    redis-cli -p "$replica" role | head -1 | grep -q master || fail "failed back?"
    echo "failover after $before of 2000 jobs: all completed exactly once"
    ;;
kill | kill_short_lease)
    # kill -9 the owning master: its replica takes over after the node
    # timeout (2 s) and an election. Writes not yet replicated may be
    # lost, so jobs run at least once (a lost completion runs again once
    # its lease lapses), and none is lost. The killed node is restarted
    # (also when the case fails) and rejoins as a replica, so the cases
    # after this one find 3 masters and 3 replicas again. The worker is
    # `lanes worker`, which ignores SIGPIPE as a program using hiredis
    # must (a write to the killed server's socket raises it).
    # kill: an 8 s lease. kill_short_lease: a 3 s lease and no
    # --store-retry, shorter than the failover (node timeout + election,
    # ~4.6 s here): the worker must not give up after a lease (the old
    # default of store_retry_ms) but ride the failover out.
    dir=${LANES_TEST_REDIS_CLUSTER_DIR:-}
    [ -d "$dir/cluster-$owner" ] || { echo "skipped [redis-cluster]: LANES_TEST_REDIS_CLUSTER_DIR not set"; exit 77; }
    trap 'restart_owner; cleanup' EXIT
    n=2000 lease=8000
    [ "$what" = kill ] || n=600 lease=3000
    "$peer" bulk "$url" q $n sleep >/dev/null || fail "C add"
    LOG="$tmp/log" "$cli" worker "$url" q --concurrency 4 --lease $lease --exit-when-empty \
        --exec sh -c 'echo "$LANES_JOB_ID" >>"$LOG"; sleep 0.005' >/dev/null 2>"$tmp/peer.err" &
    wpid=$!
    pids="$wpid"
    wait_log 100
    kill_owner
    before=$(wc -l <"$tmp/log")
    wait "$wpid" || fail "lanes worker gave up: $(cat "$tmp/peer.err")"
    pids=""
    restart_owner || fail "restart the killed node"
    [ "$before" -lt $n ] || fail "the run ended before the kill ($before jobs)"
    d=$(sort -u "$tmp/log" | wc -l)
    [ "$d" -eq $n ] || fail "$d distinct jobs ran, want $n"
    completed q $n
    rejoined
    echo "master killed after $before of $n jobs (lease $lease ms): all completed ($(wc -l <"$tmp/log") runs)"
    ;;
wait_replicas)
    # --wait-replicas N: WAIT for N replicas after an add (an error when
    # fewer confirm it in time) and after a worker's outcomes (a warning).
    # The owner's replica is stopped (SIGSTOP, for about a second, well
    # below the 2 s node timeout) so that it cannot acknowledge: the add
    # then fails with LN_EIO after wait_timeout_ms, where a plain add
    # succeeds; running, it confirms, and the job is on the replica.
    rpid=$(redis-cli -p "$replica" info server | tr -d '\r' | sed -n 's/^process_id://p')
    [ -n "$rpid" ] || fail "the replica's pid"
    trap 'kill -CONT "$rpid" 2>/dev/null; cleanup' EXIT
    # 300 ms where WAIT cannot be met; 3000 ms where it must be (a WAIT
    # on a loaded machine can take longer than 300 ms).
    wurl="$url&wait_timeout_ms=300"
    okurl="$url&wait_timeout_ms=3000"
    id=$("$cli" jobs "$okurl" add q n '{}' --wait-replicas 1) || fail "add waiting for 1 replica"
    printf 'READONLY\nHEXISTS %s name\n' "$tag:q:$id" | redis-cli -p "$replica" >"$tmp/ro"
    [ "$(sed -n 2p "$tmp/ro")" = 1 ] || fail "job $id not on the replica: $(cat "$tmp/ro")"
    "$cli" jobs "$wurl" add q n '{}' --wait-replicas 2 >/dev/null 2>"$tmp/err"
    rc=$?
    [ $rc -eq 3 ] || fail "WAIT for 2 of 1 replicas: exit $rc, want 3: $(cat "$tmp/err")"
    grep -q 'LN_EIO' "$tmp/err" && grep -q 'WAIT reached 1 of 2 replicas within 300 ms' "$tmp/err" ||
        fail "unclear error: $(cat "$tmp/err")"
    kill -STOP "$rpid"
    "$cli" jobs "$url" add q n '{}' >/dev/null || fail "a plain add with the replica stopped"
    "$cli" jobs "$wurl" add q n '{}' --wait-replicas 1 >/dev/null 2>"$tmp/err"
    rc=$?
    kill -CONT "$rpid"
    [ $rc -eq 3 ] || fail "the replica was stopped, yet the add returned $rc: $(cat "$tmp/err")"
    grep -q 'was added on the primary, but WAIT reached 0 of 1 replicas within 300 ms' "$tmp/err" ||
        fail "unclear error: $(cat "$tmp/err")"
    # A worker waits after its outcomes: with the replica running they
    # are confirmed; stopped, they stand, with a warning, and the run goes on.
    "$cli" worker "$okurl" q --wait-replicas 1 --exit-when-empty --exec true 2>"$tmp/w1" ||
        fail "worker: $(cat "$tmp/w1")"
    grep -q 'did not confirm' "$tmp/w1" && fail "a running replica did not confirm: $(cat "$tmp/w1")"
    "$peer" bulk "$url" q 3 >/dev/null || fail "C add"
    kill -STOP "$rpid"
    "$cli" worker "$wurl" q --wait-replicas 1 --exit-when-empty --exec true 2>"$tmp/w2"
    rc=$?
    kill -CONT "$rpid"
    [ $rc -eq 0 ] || fail "worker with the replica stopped: exit $rc: $(cat "$tmp/w2")"
    grep -q 'WAIT did not confirm them on the replicas' "$tmp/w2" || fail "no warning: $(cat "$tmp/w2")"
    completed q 7
    "$cli" jobs "$url&wait_replicas=1&wait_timeout_ms=10000" counts q >/dev/null 2>"$tmp/err" &&
        fail "a WAIT as long as the reply timeout was accepted"
    grep -q 'must be below the reply timeout' "$tmp/err" || fail "unclear error: $(cat "$tmp/err")"
    "$cli" jobs "sqlite:$tmp/s.db" add q n --wait-replicas 1 >/dev/null 2>"$tmp/err" &&
        fail "--wait-replicas was accepted for sqlite:"
    grep -q 'applies to a Redis store' "$tmp/err" || fail "unclear error: $(cat "$tmp/err")"
    echo "WAIT: an add confirmed on the replica; refused (LN_EIO) with it stopped; a worker warned"
    ;;
moved)
    # A worker runs all along (its connections hold the old map) while
    # the slot moves from owner to other, keys and all, between two adds.
    "$peer" work "$url" q --forever --log "$tmp/log" >/dev/null 2>"$tmp/peer.err" &
    wpid=$!
    pids="$wpid"
    "$peer" bulk "$url" q 100 >/dev/null || fail "C add"
    wait_log 100
    redis-cli -p "$other" cluster setslot "$slot" importing "$owner_id" >/dev/null || fail "IMPORTING"
    redis-cli -p "$owner" cluster setslot "$slot" migrating "$other_id" >/dev/null || fail "MIGRATING"
    while :; do
        keys=$(redis-cli -p "$owner" cluster getkeysinslot "$slot" 500)
        [ -n "$keys" ] || break
        redis-cli -p "$owner" migrate 127.0.0.1 "$other" "" 0 5000 keys $keys >/dev/null || fail "MIGRATE"
    done
    for p in $owner $other; do
        redis-cli -p "$p" cluster setslot "$slot" node "$other_id" >/dev/null || fail "SETSLOT NODE"
    done
    "$peer" bulk "$url" q 100 >/dev/null || fail "C add after the move"
    wait_log 200
    kill "$wpid"
    wait "$wpid"
    pids=""
    once "$tmp/log" 200
    completed q 200
    [ "$(redis-cli -p "$other" cluster countkeysinslot "$slot")" -gt 0 ] || fail "keys not on the new owner"
    [ "$(redis-cli -p "$owner" cluster countkeysinslot "$slot")" -eq 0 ] || fail "keys left on the old owner"
    echo "slot $slot moved to another master under a running worker: it followed MOVED, 200 jobs once each"
    ;;
ask)
    redis-cli -p "$other" cluster setslot "$slot" importing "$owner_id" >/dev/null || fail "IMPORTING"
    redis-cli -p "$owner" cluster setslot "$slot" migrating "$other_id" >/dev/null || fail "MIGRATING"
    # The slot is empty: the owner answers ASK, so the jobs go to 'other'.
    aurl="redis://127.0.0.1:$owner/0?prefix=$tag"
    "$peer" bulk "$aurl" q 10 >/dev/null || fail "add during migration"
    n=$(redis-cli -p "$other" cluster countkeysinslot "$slot")
    m=$(redis-cli -p "$owner" cluster countkeysinslot "$slot")
    for p in $owner $other; do
        redis-cli -p "$p" cluster setslot "$slot" node "$other_id" >/dev/null || fail "SETSLOT NODE"
    done
    [ "$n" -gt 0 ] && [ "$m" -eq 0 ] || fail "keys: $m on the owner, $n on the importing node"
    "$peer" work "$aurl" q --log "$tmp/log" >/dev/null || fail "run after the move"
    once "$tmp/log" 10
    echo "ASK followed: the jobs were written on the importing node and ran"
    ;;
*)
    fail "unknown case"
    ;;
esac
