#!/usr/bin/env python3
"""check-links.py [ROOT] - every relative link in the tree's Markdown
(README.md, docs/**/*.md, results/README.md) must name a file or directory
in the tree, and a #fragment must name a heading (GitHub's anchor rules) or
an <a id="..."> of the target file. Links inside code blocks and code spans
are not links. Prints each broken link as FILE:LINE: TARGET (why) and exits
1 if there is one, else prints how many links it checked and exits 0.
CTest runs it as `docs_links` (tests/format.cmake), part of `make test`."""
import os
import re
import sys

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                       os.path.join(os.path.dirname(__file__), ".."))
LINK = re.compile(r"!?\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
ANCHOR = re.compile(r"<a\s+(?:id|name)=\"([^\"]+)\"")


def markdown_files():
    out = [os.path.join(ROOT, "README.md"), os.path.join(ROOT, "results", "README.md")]
    for d, dirs, files in os.walk(os.path.join(ROOT, "docs")):
        dirs.sort()
        out += [os.path.join(d, f) for f in sorted(files) if f.endswith(".md")]
    return [f for f in out if os.path.isfile(f)]


def prose_lines(path):
    """(line number, text) outside fenced code, with code spans blanked."""
    fence = None
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            s = line.lstrip()
            m = re.match(r"(```+|~~~+)", s)
            if m:
                if fence is None:
                    fence = m.group(1)
                elif s.startswith(fence):
                    fence = None
                continue
            if fence is None:
                yield n, re.sub(r"(`+).*?\1", lambda c: " " * len(c.group(0)), line)


def slug(heading):
    text = re.sub(r"<[^>]+>", "", heading).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


_anchors = {}


def anchors(path):
    if path not in _anchors:
        seen, out = {}, set()
        fence = None
        with open(path, encoding="utf-8") as f:
            for line in f:
                s = line.lstrip()
                m = re.match(r"(```+|~~~+)", s)
                if m:
                    fence = m.group(1) if fence is None else (None if s.startswith(fence) else fence)
                    continue
                if fence is not None:
                    continue
                out.update(ANCHOR.findall(line))
                h = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
                if h:
                    base = slug(h.group(1))
                    k = seen.get(base, 0)
                    seen[base] = k + 1
                    out.add(base if k == 0 else "%s-%d" % (base, k))
        _anchors[path] = out
    return _anchors[path]


def main():
    broken, checked = [], 0
    for md in markdown_files():
        rel_md = os.path.relpath(md, ROOT)
        for n, line in prose_lines(md):
            for target in LINK.findall(line):
                if re.match(r"[a-z][a-z0-9+.-]*:", target, re.I):
                    continue  # https:, mailto:, ...
                checked += 1
                path, _, frag = target.partition("#")
                dest = os.path.normpath(os.path.join(os.path.dirname(md), path)) if path else md
                why = None
                if not dest.startswith(ROOT):
                    why = "outside the tree"
                elif not os.path.exists(dest):
                    why = "no such file"
                elif frag and os.path.isfile(dest) and dest.endswith(".md") \
                        and frag not in anchors(dest):
                    why = "no such anchor"
                if why:
                    broken.append("%s:%d: %s (%s)" % (rel_md, n, target, why))
    for b in broken:
        print(b)
    if broken:
        print("%d of %d relative links broken" % (len(broken), checked))
        return 1
    print("%d relative links, all resolve" % checked)
    return 0


if __name__ == "__main__":
    sys.exit(main())
