"""The handler of tests/cli/test_worker_persist.sh: what it does depends on
the job's name. argv[1] is a directory for marker files."""
import os
import sys
import time

sys.path.insert(0, sys.argv[2])
import lanes_handler  # noqa: E402

marks = sys.argv[1]


def handle(job):
    name = job.name
    if name == "echo":  # the data back, byte for byte, with progress and a log line
        job.progress({"half": 0.5})
        job.log("echo " + job.id)
        print("a stray print goes to stderr")
        return lanes_handler.Raw(job.data_text)
    if name == "crash-once":  # the first run kills its handler mid-job
        mark = os.path.join(marks, "crashed." + job.id)
        if not os.path.exists(mark):
            open(mark, "w").close()
            os.kill(os.getpid(), 9)
        return {"pid": os.getpid()}
    if name == "crash-always":
        os._exit(3)
    if name == "bad-line":
        lanes_handler._proto.write(b"this is not json\n")
        time.sleep(60)
    if name == "slow":
        open(os.path.join(marks, "slow." + str(os.getpid())), "w").close()
        time.sleep(60)
    if name == "error":
        raise ValueError("no good")
    return {"pid": os.getpid()}


lanes_handler.run(handle)
