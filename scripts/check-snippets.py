#!/usr/bin/env python3
"""check-snippets.py SRC BUILD CC - compile every ```c block of README.md
and docs/*.md (docs/internals/ is left out) against the headers in SRC/include
and the libraries built in BUILD; exit 1 when one does not compile.

A block is a whole translation unit: it is compiled with -std=c11 -Wall
-Wextra -Werror, and a block that defines main() is also linked against
liblanes and liblanes-jobs (and libuv when it includes <uv.h> or
<lanes/uv.h>), so a function it calls but nobody defines fails too. The
programs are built, never run.

One marker changes that, on the line right before the opening fence:

    <!-- snippet: fragment -->

A fragment shows a few statements out of a larger program. It is compiled
(not linked) after a prelude that includes the public headers and declares
the names such fragments use (`pool`, `jobs`, `id`, ...); its statements are
wrapped in a function, its function definitions and declarations (from a
line at column 0 that names a type and a function before its '(' to the
brace that closes its body, or its ';') and its one-line `static` and
`typedef` declarations stay at file scope, a line that is only `...` is
dropped, and unused names are no error. Keep fragments rare: a reader cannot copy one.
It also checks that the README's first C example starts within its first 80
lines and is examples/quickstart.c. Documented in
docs/build.md#the-documentation-snippets.
"""
import os
import re
import subprocess
import sys
import tempfile

MARKER = "<!-- snippet: fragment -->"

PRELUDE = """#include <lanes.h>
#include <lanes/jobs.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
extern ln_pool *pool;
extern ln_jobs *jobs;
extern const char *id;
extern const char *later;
void do_step(ln_job *job, int step);
"""


# A function definition at column 0: a type and a name (no '=') before '('.
FUNC = re.compile(r"[A-Za-z_][\w \*]*[ \*](\w+)\s*\(")
KEYWORDS = {"if", "for", "while", "switch", "return", "sizeof"}


def blocks(path):
    """(line, is_fragment, text) for every ```c block of path."""
    out = []
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    i = 0
    while i < len(lines):
        if lines[i].strip() == "```c":
            start = i
            frag = i > 0 and lines[i - 1].strip() == MARKER
            j = i + 1
            while j < len(lines) and lines[j].strip() != "```":
                j += 1
            out.append((start + 1, frag, "\n".join(lines[i + 1 : j]) + "\n"))
            i = j
        i += 1
    return out


def wrap_fragment(text, n):
    """The prelude, the fragment's functions at file scope, its statements in
    functions of their own."""
    out, stmts, func = [PRELUDE], [], None
    k = 0

    def flush():
        nonlocal k
        if any(s.strip() for s in stmts):
            out.append("void ln_snippet_%d_%d(void) {\n%s}\n" % (n, k, "".join(stmts)))
            k += 1
        stmts.clear()

    depth = 0
    for line in text.splitlines(keepends=True):
        if func is not None:
            func.append(line)
            depth += line.count("{") - line.count("}")
            if depth <= 0 and "{" in "".join(func):
                out.append("".join(func))
                func = None
        elif line.strip() == "...":
            continue
        elif line.startswith("#"):
            out.insert(1, line)
        elif FUNC.match(line) and FUNC.match(line).group(1) not in KEYWORDS:
            flush()
            if line.rstrip().endswith(";"):  # a declaration
                out.append(line)
                continue
            func, depth = [line], line.count("{") - line.count("}")
            if depth <= 0 and "{" in line:  # all on one line
                out.append(line)
                func = None
        elif line.startswith(("#", "static ", "typedef ")) and line.rstrip().endswith(";"):
            flush()
            out.append(line)  # a file-scope declaration
        else:
            stmts.append(line)
    if func is not None:
        out.append("".join(func))
    flush()
    return "".join(out)


def check_front_page(src):
    """The README's first C example starts within its first 80 lines and is
    examples/quickstart.c from its first #include on (the install test builds
    that file). Returns the number of failures."""
    first = blocks(os.path.join(src, "README.md"))[:1]
    if not first or first[0][0] > 80:
        print("FAIL README.md: the first C example must start within line 80 (%s)"
              % (first[0][0] if first else "none"))
        return 1
    with open(os.path.join(src, "examples", "quickstart.c"), encoding="utf-8") as f:
        qs = f.read()
    if first[0][2] != qs[qs.find("#include"):]:
        print("FAIL README.md:%d: not examples/quickstart.c (from its first #include)"
              % first[0][0])
        return 1
    print("ok   README.md:%d is examples/quickstart.c, within line 80" % first[0][0])
    return 0


def main():
    src, build, cc = sys.argv[1], sys.argv[2], sys.argv[3]
    files = [os.path.join(src, "README.md")]
    docs = os.path.join(src, "docs")
    files += sorted(os.path.join(docs, f) for f in os.listdir(docs) if f.endswith(".md"))
    libdirs = sorted({os.path.dirname(os.path.join(dp, f))
                      for dp, _, fs in os.walk(build) for f in fs
                      if re.fullmatch(r"liblanes(-jobs)?\.so", f)})
    found = {f for dp, _, fs in os.walk(build) for f in fs}
    if "liblanes.so" not in found:
        print("check-snippets: no liblanes.so under %s (build first)" % build)
        return 2
    if "liblanes-jobs.so" not in found:
        print("skipped [jobs]: this tree has no liblanes-jobs (LN_WITH_JOBS=OFF)")
        return 77
    uv = subprocess.run(["pkg-config", "--exists", "libuv"]).returncode == 0
    if not uv:
        print("skipped [libuv]: libuv not found (pkg-config libuv)")
        return 77
    cflags = ["-std=c11", "-Wall", "-Wextra", "-Werror", "-D_POSIX_C_SOURCE=200809L",
              "-I" + os.path.join(src, "include")]
    failed = total = frags = 0
    with tempfile.TemporaryDirectory() as tmp:
        for path in files:
            rel = os.path.relpath(path, src)
            for line, frag, text in blocks(path):
                total += 1
                frags += frag
                code = wrap_fragment(text, total) if frag else text
                c = os.path.join(tmp, "snippet%d.c" % total)
                with open(c, "w", encoding="utf-8") as f:
                    f.write(code)
                links = not frag and re.search(r"^\s*int\s+main\s*\(", text, re.M)
                cmd = [cc] + cflags + (["-Wno-unused"] if frag else []) + [c]
                if links:
                    cmd += ["-o", os.path.join(tmp, "a%d" % total)]
                    cmd += ["-L" + d for d in libdirs] + ["-llanes-jobs", "-llanes"]
                    if re.search(r"#include\s*<(lanes/)?uv\.h>", text):
                        cmd += ["-luv"]
                    cmd += ["-pthread"]
                else:
                    cmd += ["-c", "-o", os.path.join(tmp, "a%d.o" % total)]
                r = subprocess.run(cmd, capture_output=True, text=True)
                what = "fragment" if frag else "program" if links else "unit"
                if r.returncode != 0:
                    failed += 1
                    print("FAIL %s:%d (%s)\n%s" % (rel, line, what, r.stdout + r.stderr))
                else:
                    print("ok   %s:%d (%s)" % (rel, line, what))
    failed += check_front_page(src)
    print("%d C snippets, %d fragments, %d failed" % (total, frags, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
