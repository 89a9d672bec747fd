#!/usr/bin/env python3
"""The test directory of the nsscache ldap tests, as LDIF on stdout.

gen-ldif.py rfc2307   people and posixGroups with memberUid, ssh keys, and hostile entries
gen-ldif.py rfc2307bis  the same people, groups with member DNs, one nested in another
gen-ldif.py ad        an Active Directory shaped tree: sAMAccountName, objectSid, pwdLastSet
"""
import base64
import struct
import sys

BASE = "dc=example,dc=com"
out = []


def e(dn, *lines):
    out.append("dn: %s\n%s\n" % (dn, "\n".join(lines)))


def sid(rid):
    # Active Directory's classes need attributes slapd would make up: the entries are
    # inetOrgPerson and groupOfNames with extensibleObject, carrying AD's attributes (msuser.schema)
    # S-1-5-21-1-2-3-RID: revision 1, 5 sub-authorities, authority 5 (big-endian 48 bits)
    subs = [21, 1, 2, 3, rid]
    raw = bytes([1, len(subs)]) + (5).to_bytes(6, "big") + b"".join(struct.pack("<I", s) for s in subs)
    return "objectSid:: " + base64.b64encode(raw).decode()


USERS = [  # name, uid, gecos, home, shell
    ("alice", 2001, "Alice A", "/home/alice", "/bin/bash"),
    ("bob", 2002, "Bob B", "/home/bob", "/bin/zsh"),
    ("carol", 2003, None, "/home/carol", "/bin/sh"),
    ("dave", 2004, "Dave D", "/home/dave", "/bin/bash"),
    ("erin", 2005, "Erin E", "/home/erin", "/bin/bash"),
    ("frank", 2006, "Frank F", "/home/frank", "/bin/bash"),
    ("grace", 2007, "Grace G", "/home/grace", "/bin/bash"),
]
KEYS = {"alice": ["ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIA alice@laptop", "ssh-rsa AAAAB3NzaC1yc2E alice@desk"]}


def common():
    e(BASE, "objectClass: dcObject", "objectClass: organization", "o: example", "dc: example")
    e("ou=people," + BASE, "objectClass: organizationalUnit", "ou: people")
    e("ou=group," + BASE, "objectClass: organizationalUnit", "ou: group")
    e("cn=reader," + BASE, "objectClass: organizationalRole", "objectClass: simpleSecurityObject",
      "cn: reader", "userPassword: readerpw")


def posix_user(name, uid, gecos, home, shell, extra=()):
    lines = ["objectClass: posixAccount", "objectClass: shadowAccount", "objectClass: inetOrgPerson",
             "objectClass: ldapPublicKey", "uid: " + name, "cn: %s Full" % name.capitalize(), "sn: " + name,
             "uidNumber: %d" % uid, "gidNumber: 3001", "homeDirectory: " + home, "loginShell: " + shell,
             "shadowLastChange: 19000", "shadowMax: 99999"]
    if gecos:
        lines.append("gecos: " + gecos)
    lines += ["sshPublicKey: " + k for k in KEYS.get(name, [])]
    lines += list(extra)
    e("uid=%s,ou=people,%s" % (name, BASE), *lines)


def hostile():
    # each rejected alone: uid 0, a name that is not portable, a name of the node's own,
    # a gecos far over any limit
    posix_user("toor", 0, "Root Again", "/root", "/bin/bash")
    e("uid=-rf,ou=people," + BASE, "objectClass: posixAccount", "objectClass: account", "uid: -rf", "cn: x",
      "uidNumber: 2100", "gidNumber: 3001", "homeDirectory: /home/x", "loginShell: /bin/sh")
    posix_user("localuser", 2101, "Local", "/home/localuser", "/bin/sh")
    posix_user("huge", 2103, "H" * 70000, "/home/huge", "/bin/sh")


def rfc2307():
    common()
    for u in USERS:
        posix_user(*u)
    hostile()
    e("cn=team,ou=group," + BASE, "objectClass: posixGroup", "cn: team", "gidNumber: 3001", "memberUid: bob",
      "memberUid: alice")
    e("cn=ops,ou=group," + BASE, "objectClass: posixGroup", "cn: ops", "gidNumber: 3002", "memberUid: carol",
      "memberUid: root")
    e("cn=wheel,ou=group," + BASE, "objectClass: posixGroup", "cn: wheel", "gidNumber: 0", "memberUid: alice")


def rfc2307bis():
    common()
    for u in USERS:
        posix_user(*u)

    def dn(n):
        return "uid=%s,ou=people,%s" % (n, BASE)

    # posixGroup is structural in nis.schema: extensibleObject lets it carry member
    def group(cn, gid, members):
        e("cn=%s,ou=group,%s" % (cn, BASE), "objectClass: posixGroup", "objectClass: extensibleObject",
          "cn: " + cn, "gidNumber: %d" % gid, *["member: " + m for m in members])

    group("team", 3001, [dn("bob"), dn("alice")])
    group("ops", 3002, [dn("carol"), "cn=team,ou=group," + BASE])
    group("all", 3003, [dn("grace"), "cn=ops,ou=group," + BASE])


def ad():
    common()
    for i, (name, _, gecos, home, shell) in enumerate(USERS):
        rid = 2001 + i
        lines = ["objectClass: inetOrgPerson", "objectClass: extensibleObject", "cn: " + name, "sn: " + name, "sAMAccountName: " + name,
                 sid(rid), "unixHomeDirectory: " + home, "loginShell: " + shell,
                 "pwdLastSet: 133000000000000000", "whenChanged: 20240101000000.0Z", "uid: " + name]
        if gecos:
            lines.append("displayName: " + gecos)
        lines += ["sshPublicKey: " + k for k in KEYS.get(name, [])]
        e("cn=%s,ou=people,%s" % (name, BASE), *lines)
    e("cn=team,ou=group," + BASE, "objectClass: groupOfNames", "objectClass: extensibleObject", "cn: team", "sAMAccountName: team", sid(3001),
      "whenChanged: 20240101000000.0Z", "member: cn=alice,ou=people," + BASE, "member: cn=bob,ou=people," + BASE)


{"rfc2307": rfc2307, "rfc2307bis": rfc2307bis, "ad": ad}[sys.argv[1]]()
sys.stdout.write("\n".join(out))
