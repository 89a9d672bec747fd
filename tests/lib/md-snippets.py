#!/usr/bin/env python3
"""What a Markdown page shows a reader to type or to copy (for 0007-readme.t).

md-snippets.py blocks FILE DIR
    writes each fenced block of FILE to DIR/<n>.<kind> and prints one line
    per block, "<n> <kind> <line>": kind is the block's info string (sh,
    yaml...), or for a block without one the file its first line names
    ("# /etc/nsswitch.conf" gives nsswitch.conf), else "unknown".
md-snippets.py commands FILE
    prints one line per command, "<line>\t<where>\t<words>": every command
    of the sh blocks, and of the code spans that start with one of sunkd's
    programs or make, split as the shell splits them (quotes removed, a
    comment dropped, one command per ; && || |, redirections left out, the
    commands inside $(...) on their own); leading VAR=value words and sudo
    are dropped.  <words> is shlex-quoted, for `eval set --`.
md-snippets.py links FILE
    prints "<line>\t<target>" for every relative link of FILE.
"""
import os
import re
import shlex
import sys

FENCE = re.compile(r'^(\s*)```\s*([A-Za-z0-9_.+-]*)\s*$')
SPAN = re.compile(r'`([^`\n]+)`')
LINK = re.compile(r'\]\(([^)\s]+)\)')
SPAN_PROGRAMS = ('sunkd', 'sunkctl', 'sunkd-authkeys', 'make')
SEPARATORS = {';', '&&', '||', '|', '&', '(', ')'}
REDIRECTS = {'>', '>>', '<', '2>', '>&', '2>&1'}


def read(path):
    with open(path, encoding='utf-8') as f:
        return f.read().split('\n')


def blocks(lines):
    """(first line number, info, lines) of each fenced block; the rest of the text."""
    out, prose, cur = [], [], None
    for n, line in enumerate(lines, 1):
        m = FENCE.match(line)
        if cur is None:
            if m:
                cur = (n + 1, m.group(2), [])
            else:
                prose.append((n, line))
        elif m and not m.group(2):
            out.append(cur)
            cur = None
        else:
            cur[2].append(line)
    if cur is not None:
        sys.exit('%d: a fenced block that never ends' % (cur[0] - 1))
    return out, prose


def kind(info, body):
    if info:
        return info
    first = body[0].strip() if body else ''
    m = re.match(r'^#\s*(/\S+)$', first)
    return os.path.basename(m.group(1)) if m else 'unknown'


def split_commands(text):
    """Lists of words, one per command of the shell line TEXT."""
    lex = shlex.shlex(text, posix=True, punctuation_chars=';&|()<>')
    lex.whitespace_split = True
    lex.commenters = '#'
    try:
        tokens = list(lex)
    except ValueError as e:
        raise ValueError('%s: %s' % (text, e))
    cmds, cur, skip = [], [], False
    for t in tokens:
        if skip:
            skip = False
            continue
        if t in SEPARATORS:
            cmds.append(cur)
            cur = []
        elif t in REDIRECTS or re.match(r'^[0-9]*[<>]+&?[0-9]*$', t):
            skip = not re.search(r'&[0-9]$', t)
        else:
            for inner in re.findall(r'\$\(([^()]*)\)', t):
                cmds.extend(split_commands(inner))
            cur.append(t)
    cmds.append(cur)
    out = []
    for c in cmds:
        while c and (re.match(r'^[A-Za-z_][A-Za-z0-9_]*=', c[0]) or c[0] == 'sudo'):
            c = c[1:]
        if c:
            out.append(c)
    return out


def commands(path):
    lines = read(path)
    bl, prose = blocks(lines)
    for start, info, body in bl:
        if info != 'sh':
            continue
        for i, line in enumerate(body):
            for c in split_commands(line):
                yield start + i, 'block', c
    for n, line in prose:
        for span in SPAN.findall(line):
            for c in split_commands(span):
                if c[0] in SPAN_PROGRAMS or c[0].endswith('/sunkd-authkeys'):
                    yield n, 'span', c


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    what, path = sys.argv[1], sys.argv[2]
    if what == 'blocks':
        bl, _ = blocks(read(path))
        for i, (start, info, body) in enumerate(bl, 1):
            k = kind(info, body)
            with open(os.path.join(sys.argv[3], '%d.%s' % (i, k)), 'w', encoding='utf-8') as f:
                f.write('\n'.join(body) + '\n')
            print(i, k, start)
    elif what == 'commands':
        for n, where, c in commands(path):
            print('%d\t%s\t%s' % (n, where, shlex.join(c)))
    elif what == 'links':
        bl, prose = blocks(read(path))
        for n, line in prose:
            for target in LINK.findall(line):
                if not re.match(r'^[a-z]+:', target):
                    print('%d\t%s' % (n, target))
    else:
        sys.exit(__doc__)


if __name__ == '__main__':
    main()
