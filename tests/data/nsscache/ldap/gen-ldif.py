#!/usr/bin/env python3
"""The test directory of the nsscache ldap tests, as LDIF on stdout.

gen-ldif.py rfc2307   people and posixGroups with memberUid, ssh keys, and hostile entries
gen-ldif.py rfc2307bis  the same people, groups with member DNs, one nested in another
gen-ldif.py ad        an Active Directory shaped tree: sAMAccountName, objectSid, pwdLastSet

Each mode also holds nisNetgroups (triples, member netgroups, nested, empty) under
ou=netgroup and automount maps (auto.master naming auto.home and auto.data) under
ou=automounts, in the schema nsscache reads them in; in AD mode they carry whenChanged,
which nsscache's ad mode requires of every entry.  rfc2307 adds hostile ones.

gen-ldif.py rfc2307 --nsscache  leaves out the hostile entries that break a line of the
                      netgroup or automount files: nsscache reads every file back and refuses the
                      whole map when a key is missing (its Verify), where sunkd rejects the entry
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


def netgroups(ad=False, hostile=False):
    extra = ["objectClass: extensibleObject", "whenChanged: 20240101000000.0Z"] if ad else []

    def ng(cn, triples=(), members=(), parent="ou=netgroup," + BASE, raw=()):
        e("cn=%s,%s" % (cn, parent), "objectClass: nisNetgroup", *extra, "cn: " + cn,
          *["nisNetgroupTriple: " + t for t in triples], *["memberNisNetgroup: " + m for m in members], *raw)

    e("ou=netgroup," + BASE, "objectClass: organizationalUnit", "ou: netgroup")
    # out of order on purpose: nsscache sorts members and triples together
    ng("admins", ["(login1,alice,example.com)", "(,bob,)"], ["ops-hosts"])
    ng("ops-hosts", ["(node2,-,)", "(node1,-,)"])
    ng("all", ["(-,grace,)"], ["ops-hosts", "admins"])
    ng("empty")
    if not hostile:
        return
    # each rejected alone: a triple with blanks, a member with a newline (the rest of that
    # netgroup stays), a blank in the name, one name twice, a triple far over any limit
    if BREAKING:
        ng("bad name", ["(h,u,d)"])
    ng("evil", ["(ok,carol,)", "(a, b, c)"], raw=["memberNisNetgroup:: " +
                                                  base64.b64encode(b"ok\n(x,root,)").decode()] if BREAKING else [])
    e("ou=more,ou=netgroup," + BASE, "objectClass: organizationalUnit", "ou: more")
    ng("dup", ["(one,,)"])
    ng("dup", ["(two,,)"], parent="ou=more,ou=netgroup," + BASE)
    ng("hugeng", ["(" + "h" * 70000 + ",,)"])


def automounts(ad=False, hostile=False):
    extra = ["objectClass: extensibleObject", "whenChanged: 20240101000000.0Z"] if ad else []
    top = "ou=automounts," + BASE

    def amap(ou):
        e("ou=%s,%s" % (ou, top), "objectClass: automountMap", "ou: " + ou)

    def am(ou, key, info):
        e("cn=%s,ou=%s,%s" % (key, ou, top), "objectClass: automount", *extra, "cn: " + key,
          "automountInformation: " + info)

    e(top, "objectClass: organizationalUnit", "ou: automounts")
    amap("auto.master")
    am("auto.master", "/home", "ldap:ldap.example.com:ou=auto.home,%s -rw,intr" % top)
    am("auto.master", "/mnt/data", "ldap:ldap.example.com:ou=auto.data,%s" % top)
    amap("auto.home")
    am("auto.home", "alice", "-rw,intr nfs1:/export/home/alice")
    am("auto.home", "bob", "-rw,hard nfs2:/export/home/&")
    am("auto.home", "*", "-rw nfs1:/export/home/&")
    amap("auto.data")
    am("auto.data", "scratch", "-fstype=nfs4,rw nfs3:/scratch")
    am("auto.data", "ref", "-ro nfs3:/ref")
    if not hostile:
        return
    # a mount point with a ".." component and one with a blank (no file is named after either),
    # a key with a blank, a location with a newline
    am("auto.master", "/../../etc", "ldap:ldap.example.com:ou=auto.data,%s" % top)
    if not BREAKING:
        return
    am("auto.home", "bad key", "-rw nfs1:/export/home/x")
    e("cn=carol,ou=auto.home," + top, "objectClass: automount", "cn: carol",
      "automountInformation:: " + base64.b64encode(b"-rw nfs1:/export/home/carol\n* -rw evil:/").decode())


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
    netgroups(hostile=True)
    automounts(hostile=True)


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
    netgroups()
    automounts()


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
    netgroups(ad=True)
    automounts(ad=True)


BREAKING = sys.argv[2:] != ["--nsscache"]
{"rfc2307": rfc2307, "rfc2307bis": rfc2307bis, "ad": ad}[sys.argv[1]]()
sys.stdout.write("\n".join(out))
