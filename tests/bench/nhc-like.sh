#!/bin/bash
# The reference of make bench's health row: the ten checks of its health
# module written as an NHC-style shell script does them (NHC's own checks
# are bash functions over the same files and commands).  Exit 1 on the
# first failure, as NHC does.
fail() { echo "$*"; exit 1; }
grep -q ' / / ' /proc/self/mountinfo || fail "/ not mounted"
grep -q ' /proc proc ' /proc/mounts || fail "/proc not mounted"
[ "$(df -P / | awk 'NR == 2 { print 100 - $5 }')" -ge 1 ] || fail "/ full"
[ "$(df -P /tmp | awk 'NR == 2 { print 100 - $5 }')" -ge 1 ] || fail "/tmp full"
[ "$(df -P -i / | awk 'NR == 2 { print 100 - $5 }')" -ge 1 ] 2>/dev/null || fail "/ out of inodes"
[ "$(awk '/^MemAvailable:/ { print $2 }' /proc/meminfo)" -ge 1024 ] || fail "memory"
pgrep -x "$(cat /proc/1/comm)" > /dev/null || fail "init not running"
grep -q '^ID=' /etc/os-release || fail "os-release"
awk -v n="$(nproc)" '{ exit !($2 / n <= 1000) }' /proc/loadavg || fail "load"
[ -d /sys/class/infiniband ] && { grep -q ACTIVE /sys/class/infiniband/*/ports/*/state || fail "ib"; }
exit 0
