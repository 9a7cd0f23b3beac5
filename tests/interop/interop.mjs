// interop.mjs - the BullMQ side of lanes' Redis interop tests
// (tests/interop/test_redis_interop.sh). Stock bullmq 6.7.0 from package-lock.json.
//
//   node interop.mjs <command> <queue> [args...]
//
// Redis comes from LANES_TEST_REDIS_URL (redis://HOST:PORT/DB). Every
// command prints one JSON line on success and exits 0; a failed check
// prints the reason on stderr and exits 1.
//
// Each feature's commands are in tests/interop/node/<feature>.mjs.
import { check, fail } from './node/common.mjs';
import {
  produce, summarize, work, serve, events, compare, addOne, jobInfo, obliterate, waitFinished,
  counts,
} from './node/jobs.mjs';
import { board, boardWorkers } from './node/board.mjs';
import {
  traceProduce, traceCheck, jsonProduce, jsonCheck, halfFail, halfCheck, halfIds, halfIdsCheck,
} from './node/data.mjs';
import { getWorkers, idleWorkers } from './node/workers.mjs';
import { metrics, promExport } from './node/metrics.mjs';
import { cancelSeen } from './node/cancel.mjs';
import { schedUpsert, schedCheck } from './node/schedulers.mjs';
import {
  globalConcurrency, rlAdd, rlWork, rlCheck, rlNode, rlMeta, rlError,
} from './node/limits.mjs';
import { flowAdd, flowCheck, flowJson, flowRofAdd, flowRofCheck } from './node/flows.mjs';
import {
  drainSetup, drainCheck, fixSetup, waitState, fixCheck, live, cancelSetup, cancelCheck,
} from './node/admin.mjs';
import { backoffAdd, backoffWork, backoffCheck } from './node/backoff.mjs';
import {
  rtSetup, rtTrim, rtRemove, rtBig, rtHold, rtKeys,
} from './node/remove_tree.mjs';
import { dynStep, dynAdd, dynMissing, dynCheck } from './node/dynflow.mjs';
import { xcServe, xcEvents, xcCheck } from './node/exec_children.mjs';
import { fmUnprocessed, fmChildren, fmWaitChild, fmFlowParent } from './node/flowmore.mjs';
import { dnStalled } from './node/dedup_next.mjs';
import {
  edSetup, edNode, edCheck, pcSetup, pcPromote, pcCounts, trAdd, trTrim, trLen,
  apAdd, apPrio, apCheck, sdAdd,
} from './node/edit.mjs';
import {
  srTake, srCheck, srRun, srAdd, srPause, srRequeued, srNodeTake, srRjkTake, srRjkCheck,
} from './node/schedrec.mjs';
import { logsGet, logsNode } from './node/logs.mjs';
import { dtSetup, dtNode } from './node/detach.mjs';
import {
  obSetup, obCheck, obNode, obSame, obState, obRefused, obHold, obGone,
} from './node/obliterate.mjs';
import { rfSetup, rfCheck, rfAdd, rfNodeRetry, rfRanAgain } from './node/retry_finished.mjs';
import { drSetup, drEvents } from './node/drained.mjs';

const [cmd, queue, ...args] = process.argv.slice(2);
check(queue, 'usage: node interop.mjs <command> <queue> [args]');
switch (cmd) {
  case 'produce': await produce(queue); break;
  case 'summarize': console.log(JSON.stringify(await summarize(queue))); break;
  case 'work': await work(queue, args[0], args[1], JSON.parse(args[2] ?? '{}')); break;
  case 'serve': await serve(queue, args[0]); break;
  case 'counts': await counts(queue); break;
  case 'events': await events(queue); break;
  case 'compare': compare(queue, args[0]); break;
  case 'board': await board(queue, args[0]); break;
  case 'board-workers': await boardWorkers(queue); break;
  case 'trace-produce': await traceProduce(queue, args[0]); break;
  case 'trace-check': await traceCheck(queue, args[0]); break;
  case 'json-produce': await jsonProduce(queue); break;
  case 'json-check': await jsonCheck(queue, args[0]); break;
  case 'global-concurrency': await globalConcurrency(queue, args[0], args[1]); break;
  case 'obliterate': await obliterate(queue); break;
  case 'add-one': await addOne(queue, args[0], args[1], args[2]); break;
  case 'job': await jobInfo(queue, args[0]); break;
  case 'wait-finished': await waitFinished(queue, args[0], args[1], args[2]); break;
  case 'get-workers': await getWorkers(queue); break;
  case 'idle-workers': await idleWorkers(queue); break;
  case 'metrics': await metrics(queue); break;
  case 'prom-export': await promExport(queue, args[0]); break;
  case 'cancel-seen': await cancelSeen(queue, args[0], args[1], args[2]); break;
  case 'sched-upsert': await schedUpsert(queue, args[0], args[1], args[2]); break;
  case 'sched-check': await schedCheck(queue, args[0], args[1], args[2], args[3], args[4]); break;
  case 'rl-add': await rlAdd(queue, args[0]); break;
  case 'rl-work': await rlWork(queue, args[0], args[1], args[2]); break;
  case 'rl-check': await rlCheck(queue, args[0], args[1], args[2]); break;
  case 'rl-node': await rlNode(queue, args[0], args[1]); break;
  case 'rl-meta': await rlMeta(queue, args[0], args[1], args[2]); break;
  case 'rl-error': await rlError(queue, args[0]); break;
  case 'flow-add': await flowAdd(queue); break;
  case 'flow-json': flowJson(queue, args); break;
  case 'flow-check': await flowCheck(queue, args[0], args[1], args[2]); break;
  case 'flow-rof-add': await flowRofAdd(queue); break;
  case 'flow-rof-check': await flowRofCheck(queue, args[0], args[1]); break;
  case 'drain-setup': await drainSetup(queue); break;
  case 'drain-check': await drainCheck(queue, args[0], args[1]); break;
  case 'fix-setup': await fixSetup(queue); break;
  case 'wait-state': await waitState(queue, args[0], args[1]); break;
  case 'fix-check': await fixCheck(queue, args[0], args[1], args[2]); break;
  case 'half-fail': await halfFail(queue); break;
  case 'half-check': await halfCheck(queue, args[0]); break;
  case 'half-ids': await halfIds(queue); break;
  case 'half-ids-check': await halfIdsCheck(queue); break;
  case 'live': await live(queue); break;
  case 'cancel-setup': await cancelSetup(queue); break;
  case 'cancel-check': await cancelCheck(queue, args[0], args[1]); break;
  case 'backoff-add': await backoffAdd(queue); break;
  case 'backoff-work': await backoffWork(queue, args[0]); break;
  case 'backoff-check': await backoffCheck(queue, args[0]); break;
  case 'rt-setup': await rtSetup(queue); break;
  case 'rt-trim': await rtTrim(queue); break;
  case 'rt-remove': await rtRemove(queue, args[0]); break;
  case 'rt-big': await rtBig(queue); break;
  case 'rt-hold': await rtHold(queue); break;
  case 'rt-keys': await rtKeys(queue); break;
  case 'dyn-step': await dynStep(queue); break;
  case 'dyn-add': await dynAdd(queue, args[0], args[1], args[2], args[3], args[4]); break;
  case 'dyn-missing': await dynMissing(queue); break;
  case 'dyn-check': await dynCheck(queue, args[0], args[1]); break;
  case 'xc-serve': await xcServe(queue, args[0]); break;
  case 'xc-events': await xcEvents(queue); break;
  case 'xc-check': await xcCheck(queue, args[0], args[1]); break;
  case 'fm-unprocessed': await fmUnprocessed(queue, args[0]); break;
  case 'fm-children': await fmChildren(queue, args[0]); break;
  case 'fm-wait-child': await fmWaitChild(queue, args[0], args[1], args[2], args[3]); break;
  case 'fm-flow-parent': await fmFlowParent(queue, args[0], args[1]); break;
  case 'dn-stalled': await dnStalled(queue, args[0]); break;
  case 'ed-setup': await edSetup(queue); break;
  case 'ed-node': await edNode(queue); break;
  case 'ed-check': await edCheck(queue, args[0]); break;
  case 'pc-setup': await pcSetup(queue); break;
  case 'pc-promote': await pcPromote(queue); break;
  case 'pc-counts': await pcCounts(queue); break;
  case 'tr-add': await trAdd(queue, args[0]); break;
  case 'tr-trim': await trTrim(queue, args[0]); break;
  case 'tr-len': await trLen(queue); break;
  case 'ap-add': await apAdd(queue); break;
  case 'ap-prio': await apPrio(queue, args[0]); break;
  case 'ap-check': await apCheck(queue, args[0]); break;
  case 'sd-add': await sdAdd(queue, args[0]); break;
  case 'sr-take': await srTake(queue, args[0], args[1]); break;
  case 'sr-check': await srCheck(queue, args[0], args[1]); break;
  case 'sr-run': await srRun(queue, args[0], args[1]); break;
  case 'sr-add': await srAdd(queue, args[0]); break;
  case 'sr-pause': await srPause(queue); break;
  case 'sr-requeued': await srRequeued(queue, args[0]); break;
  case 'sr-node-take': await srNodeTake(queue, args[0], args[1]); break;
  case 'sr-rjk-take': await srRjkTake(queue); break;
  case 'sr-rjk-check': await srRjkCheck(queue, args[0], args[1], args[2]); break;
  case 'logs-get': await logsGet(queue, args[0]); break;
  case 'logs-node': await logsNode(queue, args[0], args[1], args[2], args[3]); break;
  case 'dt-setup': await dtSetup(queue); break;
  case 'dt-node': await dtNode(queue, args[0]); break;
  case 'ob-setup': await obSetup(queue, args[0]); break;
  case 'ob-check': await obCheck(queue, args[0], args[1]); break;
  case 'ob-node': await obNode(queue, args[0]); break;
  case 'ob-same': await obSame(queue, args[0]); break;
  case 'ob-state': await obState(queue); break;
  case 'ob-refused': await obRefused(queue, args[0]); break;
  case 'ob-hold': await obHold(queue); break;
  case 'ob-gone': await obGone(queue, args[0], args[1]); break;
  case 'rf-setup': await rfSetup(queue); break;
  case 'rf-check': await rfCheck(queue, args[0], args[1], args[2]); break;
  case 'rf-add': await rfAdd(queue); break;
  case 'rf-node-retry': await rfNodeRetry(queue, args[0], args[1], args[2]); break;
  case 'rf-ran-again': await rfRanAgain(queue, ...args); break;
  case 'dr-setup': await drSetup(queue); break;
  case 'dr-events': await drEvents(queue); break;
  default: fail(`unknown command ${cmd}`);
}
process.exit(0);
