"""lanes_handler - write a `lanes worker --exec-persistent` handler in Python.

    import lanes_handler

    def handle(job):
        job.progress(50)
        job.log("working on " + job.id)
        return {"sum": sum(job.data["numbers"])}

    lanes_handler.run(handle)

The worker keeps this process running and sends it one job at a time as a
JSON line on stdin; `run` calls `handle(job)` for each and answers on
stdout (the protocol is docs/persistent.md). What `handle` returns is the
job's result (printed with json.dumps); `Raw(text)` returns JSON text as it
is, byte for byte. An exception fails the job with its message (retried
while the job has attempts left); `Unrecoverable` fails it for good.

Anything the handler prints goes to stderr (the worker's), so print() never
corrupts the protocol: stdout is kept for the worker's lines only.
"""

import json
import os
import sys

__all__ = ["Job", "Raw", "Unrecoverable", "run"]


class Raw:
    """A result given as JSON text, stored byte for byte (one line)."""

    def __init__(self, text):
        self.text = text if isinstance(text, str) else text.decode("utf-8")


class Unrecoverable(Exception):
    """Raise to fail the job for good, whatever attempts it has left."""


class Job:
    """One job: id, name, queue, attempt, data (parsed) and data_text (the
    job's data exactly as stored)."""

    def __init__(self, msg, data_text, out):
        self.id = msg.get("id")
        self.name = msg.get("name")
        self.queue = msg.get("queue")
        self.attempt = msg.get("attempt")
        self.traceparent = msg.get("traceparent")
        self.data_text = data_text
        self._data = msg.get("data")
        self._out = out

    @property
    def data(self):
        return self._data

    def progress(self, value):
        """Store the job's progress (any JSON value)."""
        self._out({"type": "progress", "progress": value})

    def log(self, line):
        """Append a line to the job's log."""
        self._out({"type": "log", "line": str(line)})


def _dumps(value):
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


_proto = None  # the protocol stream, once run() started
_DATA = b',"data":'


def _data_text(line):
    """The job line's "data" member as sent: lanes writes it last, as the
    job's data text, after metadata whose strings escape every '"', so the
    first ',"data":' starts it and the line's final '}' ends it."""
    at = line.find(_DATA)
    end = line.rstrip().rfind(b"}")
    if at < 0 or end < at:
        return None
    return line[at + len(_DATA):end].decode("utf-8", "replace")


def run(handle):
    """Serve jobs from the worker until stdin closes."""
    # Keep the protocol on a private copy of stdout, and point fd 1 (and
    # sys.stdout) at stderr so stray prints land in the worker's log.
    global _proto
    proto = _proto = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)
    sys.stdout = sys.stderr

    def out(obj):
        proto.write(_dumps(obj).encode("utf-8") + b"\n")

    stdin = sys.stdin.buffer
    for line in stdin:
        if not line.strip():
            continue
        msg = json.loads(line)
        if msg.get("type") != "job":
            continue  # a line this version does not know
        job = Job(msg, _data_text(line), out)
        try:
            result = handle(job)
        except Unrecoverable as e:
            out({"type": "error", "message": str(e) or "unrecoverable", "unrecoverable": True})
            continue
        except Exception as e:  # the job fails, the handler goes on
            out({"type": "error", "message": "%s: %s" % (type(e).__name__, e)})
            continue
        if isinstance(result, Raw):
            text = result.text
            if "\n" in text or "\r" in text:
                out({"type": "error", "message": "Raw result text contains a line break"})
                continue
        else:
            try:
                text = _dumps(result)
            except (TypeError, ValueError) as e:
                out({"type": "error", "message": "result is not JSON: %s" % e})
                continue
        proto.write(b'{"type":"result","result":' + text.encode("utf-8") + b"}\n")
