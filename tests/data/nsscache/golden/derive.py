#!/usr/bin/python3
"""Derive the golden cache files from the data set in tests/lib/nss-golden.c.

Each line is produced by the expression nsscache's files cache uses
(nss_cache/caches/files.py, _WriteData), entries in source order; the
sshkey value is a Python list, written with '%s' and therefore as its repr(),
or "" for a user without keys (the line is then "name:").
Indexes follow files.py WriteIndex, except that key, offset and padding are
measured in UTF-8 bytes (nsscache measures characters, which breaks
libnss-cache's fixed-width records for non-ASCII data).
Run from this directory: ./derive.py
"""


class E:
    def __init__(self, **kw):
        self.__dict__.update(kw)


users = [
    ("sunkt-carol", 50003, 50100, "Carol Example", "/bin/bash", None, None, None, None,
     ["ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAICarol \"carol's\" \\key"]),
    ("sunkt-alice", 50001, 50100, "Alice \u00dcn\u00efc\u00f6d\u00e9", "/bin/zsh", 19000, 0, 99999, 7,
     ["ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAlice alice@laptop",
      "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQAlice alice@desk"]),
    ("sunkt-bob", 50002, 50101, "", "/bin/bash", 0, None, None, None, []),
    ("sunkt-dave", 9999, 50100, "Dave O'Neil", "/bin/bash", 18500, 1, 90, 14,
     ["ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIDave dave's key"]),
    ("sunkt-zo\u00eb", 50005, 50103, "Zo\u00eb", "/bin/sh", None, None, None, None,
     ["ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIZoe zo\u00eb@host\u00a0tab\there",
      "from=\"10.0.0.0/8\" ssh-ed25519 AAAAC3Nz ctl\x01zw\u200bend"]),
]
groups = [
    ("sunkt-users", 50100, ["sunkt-carol", "sunkt-alice", "sunkt-dave"]),
    ("sunkt-solo", 50101, ["sunkt-bob"]),
    ("sunkt-empty", 50102, []),
    ("sunkt-admins", 50103, ["sunkt-alice", "sunkt-zo\u00eb"]),
]


def passwd_line(entry):
    return '%s:%s:%d:%d:%s:%s:%s' % (
        entry.name, entry.passwd, entry.uid, entry.gid, entry.gecos,
        entry.dir, entry.shell)


def shadow_line(entry):
    return '%s:%s:%s:%s:%s:%s:%s:%s:%s' % (
        entry.name, entry.passwd, entry.lstchg or '', entry.min or '',
        entry.max or '', entry.warn or '', entry.inact or '',
        entry.expire or '', entry.flag or '')


def group_line(entry):
    return '%s:%s:%d:%s' % (entry.name, entry.passwd, entry.gid,
                            ','.join(entry.members))


def sshkey_line(entry):
    return '%s:%s' % (entry.name, entry.sshkey)


def write_map(filename, entries, render, index_attrs):
    data = b''
    indices = {attr: {} for attr in index_attrs}
    for entry in entries:
        for attr in index_attrs:
            indices[attr][str(getattr(entry, attr))] = str(len(data))
        data += render(entry).encode() + b'\n'
    with open(filename, 'wb') as f:
        f.write(data)
    for attr, index in indices.items():
        key_length = max(len(k.encode()) for k in index)
        pos_length = max(len(p) for p in index.values())
        max_length = key_length + pos_length
        with open('%s.ix%s' % (filename, attr), 'wb') as f:
            for key in sorted(index):
                pos = index[key]
                k = key.encode()
                f.write(k + b'\0' + pos.encode() + b'\0' +
                        b'\0' * (max_length - len(k) - len(pos)) + b'\n')


pw = [E(name=u[0], passwd='x', uid=u[1], gid=u[2], gecos=u[3],
        dir='/mnt/home/' + u[0], shell=u[4]) for u in users]
sp = [E(name=u[0], passwd='*', lstchg=u[5], min=u[6], max=u[7], warn=u[8],
        inact=None, expire=None, flag=None) for u in users]
gr = [E(name=g[0], passwd='x', gid=g[1], members=g[2]) for g in groups]
# nsscache's SCIM source makes an sshkey entry for every user, with sshkey ""
# when there are no keys ("Always create an entry, even if no keys").
sk = [E(name=u[0], sshkey=u[9] or "") for u in users]

write_map('passwd.cache', pw, passwd_line, ('name', 'uid'))
write_map('shadow.cache', sp, shadow_line, ('name',))
write_map('group.cache', gr, group_line, ('name', 'gid'))
write_map('sshkey.cache', sk, sshkey_line, ('name',))
