#!/usr/bin/env python3
"""What a man page's source names (for 0002-docs.t).

man-snippets.py tags PAGE.in SECTION
    the keys the .TP tags of SECTION (an .SH title, its .SS included) name,
    one a line: the leading words of the tag (".BR min_uid \", \" min_gid
    \" (integer...)\"" names min_uid and min_gid; ".BI xid_hold: \" duration\""
    names xid_hold).
man-snippets.py commands PAGE.in
    "<line>\t<words>" for every command line of sunkd, sunkctl or
    sunkd-authkeys the page shows: a quoted macro argument that starts with
    one ('.B "sunkctl gres list"'), a macro line whose first argument is one
    ('.B sunkctl reload'), and the commands of .EX blocks (a "$ " or "# "
    prompt dropped; a command may follow another word, as the command of
    "AuthorizedKeysCommand .../sunkd-authkeys ...").  Escapes are undone,
    \\fI...\\fP placeholders kept as their words; <words> as md-snippets.py
    prints them.
"""
import importlib.util
import os
import re
import shlex
import sys

_spec = importlib.util.spec_from_file_location(
    'md_snippets', os.path.join(os.path.dirname(os.path.abspath(__file__)), 'md-snippets.py'))
md = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(md)

PROGRAMS = ('sunkd', 'sunkctl', 'sunkd-authkeys')


def unescape(s):
    s = re.sub(r'\\f[BIRP]|\\f\[[A-Z]*\]', '', s)
    s = s.replace('\\-', '-').replace('\\(aq', "'").replace('\\e', '\\').replace('\\~', ' ')
    return s.replace('\\&', '').replace('\\ ', ' ')


def is_program(word):
    return word in PROGRAMS or word.endswith('/sunkd-authkeys')


def macro_args(line):
    """The arguments of a macro line, groff's quoting ("" in quotes is ")."""
    args, cur, quoted, i, rest = [], '', False, 0, line.split(None, 1)
    text = rest[1] if len(rest) > 1 else ''
    while i < len(text):
        c = text[i]
        if quoted:
            if c == '"' and text[i + 1:i + 2] == '"':
                cur += '"'
                i += 1
            elif c == '"':
                quoted = False
                args.append(cur)
                cur = None
            else:
                cur += c
        elif c == '"' and not cur:
            quoted, cur = True, ''
        elif c.isspace():
            if cur:
                args.append(cur)
            cur = ''
        else:
            cur = (cur or '') + c
        i += 1
    if cur:
        args.append(cur)
    return args


def logical_lines(path):
    """(line number, text) with continuation lines (ending in a backslash) joined."""
    with open(path, encoding='utf-8') as f:
        raw = f.read().split('\n')
    out, n, i = [], 0, 0
    while i < len(raw):
        n, text = i + 1, raw[i]
        while text.endswith('\\') and not text.endswith('\\\\') and i + 1 < len(raw):
            i += 1
            text = text[:-1] + raw[i]
        out.append((n, text))
        i += 1
    return out


def tags(path, section):
    in_sec, tp = False, False
    for _, line in logical_lines(path):
        if line.startswith('.SH '):
            in_sec = unescape(line[4:].strip().strip('"')) == section
            tp = False
            continue
        if not in_sec:
            continue
        if tp:
            tp = False
            for a in macro_args(line) if line.startswith('.') else line.split():
                a = unescape(a)
                if a == ', ':
                    continue
                m = re.match(r'^([a-z_][a-z0-9_]*):?$', a)
                if not m:
                    break
                print(m.group(1))
        elif line.startswith('.TP'):
            tp = True


def from_program(words):
    for i, w in enumerate(words):
        if is_program(w):
            return words[i:]
    return None


def ex_commands(block):
    """The commands of an .EX block: its prompted lines ("$ ", "# "), or every line if none is."""
    prompted = [(n, t) for n, t in block if re.match(r'^[$#] ', t)]
    for n, text in prompted or block:
        try:
            cmds = md.split_commands(re.sub(r'^[$#] ', '', text))
        except ValueError:
            continue
        for c in cmds:
            c = from_program(c)
            if c:
                yield n, c


def commands(path):
    block = None
    for n, line in logical_lines(path):
        if line.startswith('.EX'):
            block = []
            continue
        if line.startswith('.EE'):
            yield from ex_commands(block or [])
            block = None
            continue
        if block is not None:
            block.append((n, unescape(line)))
            continue
        if not line.startswith('.') or line.startswith('.\\"') or line.startswith('.TH'):
            continue
        args = macro_args(line)
        if args and is_program(unescape(args[0])):
            if len(args) > 1 and re.match(r'^\([0-9]\)', args[1]):
                continue  # a reference: sunkctl (1)
            words = []
            for a in args:  # up to the punctuation an alternating macro sets in roman
                if re.match(r'^[.,;:)]+$', a):
                    break
                words += unescape(a).split()
            yield n, words
            continue
        for a in args:
            words = unescape(a).split()
            if len(words) > 1 and is_program(words[0]):
                yield n, words


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    if sys.argv[1] == 'tags' and len(sys.argv) == 4:
        tags(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == 'commands':
        for n, words in commands(sys.argv[2]):
            print('%d\t%s' % (n, shlex.join(words)))
    else:
        sys.exit(__doc__)


if __name__ == '__main__':
    main()
