#!/usr/bin/env python3
"""Read C sources as the compiler sees their tokens, not their lines, so that
the tests that hold the documentation to the code do not depend on how a
formatter breaks a line.

  c-scan.py flat PATH...        each .c file under PATH (or PATH itself) on one
                                line: comments gone, whitespace one space,
                                adjacent string literals joined
  c-scan.py rows PATH... NAME   the elements of each array NAME[] = { ... }
                                defined under PATH, one per line, as flat text
"""
import os
import re
import sys


def sources(paths):
    for p in paths:
        if os.path.isdir(p):
            for root, dirs, files in os.walk(p):
                dirs.sort()
                for f in sorted(files):
                    if f.endswith(".c"):
                        yield os.path.join(root, f)
        else:
            yield p


def flatten(text):
    """Comments removed, runs of whitespace one space, "a" "b" joined."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
            out.append(" ")
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            lit = text[i : j + 1]
            # "a" "b" is one literal: drop the closing quote before.
            k = len(out) - 1
            while k >= 0 and out[k] == " ":
                k -= 1
            if c == '"' and k >= 0 and out[k].endswith('"') and out[k].startswith('"'):
                del out[k + 1 :]
                out[k] = out[k][:-1] + lit[1:]
            else:
                out.append(lit)
            i = j + 1
        elif c.isspace():
            while i < n and text[i].isspace():
                i += 1
            out.append(" ")
        else:
            j = i
            while j < n and not text[j].isspace() and text[j] not in "\"'" and not text.startswith(
                "/*", j
            ) and not text.startswith("//", j):
                j += 1
            out.append(text[i:j])
            i = j
    return re.sub(r" +", " ", "".join(out)).strip()


def elements(body):
    """Split an initializer's body at its top-level commas."""
    items, depth, cur, i = [], 0, [], 0
    while i < len(body):
        c = body[i]
        if c == '"':
            j = i + 1
            while j < len(body) and body[j] != '"':
                j += 2 if body[j] == "\\" else 1
            cur.append(body[i : j + 1])
            i = j + 1
            continue
        if c in "{(":
            depth += 1
        elif c in "})":
            depth -= 1
        if c == "," and depth == 0:
            items.append("".join(cur).strip())
            cur = []
        else:
            cur.append(c)
        i += 1
    last = "".join(cur).strip()
    if last:
        items.append(last)
    return [x for x in items if x]


def rows(flat, name):
    for m in re.finditer(r"\b" + re.escape(name) + r" ?\[[^\]]*\] ?= ?\{", flat):
        depth, i = 1, m.end()
        start = i
        while i < len(flat) and depth:
            c = flat[i]
            if c == '"':
                i += 1
                while i < len(flat) and flat[i] != '"':
                    i += 2 if flat[i] == "\\" else 1
            elif c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
            i += 1
        yield from elements(flat[start : i - 1])


def main(argv):
    if len(argv) >= 2 and argv[0] == "flat":
        for f in sources(argv[1:]):
            with open(f, encoding="utf-8", errors="surrogateescape") as fh:
                print(flatten(fh.read()))
        return 0
    if len(argv) >= 3 and argv[0] == "rows":
        for f in sources(argv[1:-1]):
            with open(f, encoding="utf-8", errors="surrogateescape") as fh:
                for r in rows(flatten(fh.read()), argv[-1]):
                    print(r)
        return 0
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
