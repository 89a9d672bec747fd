/* Unit tests for the process, command and port check types NHC has
 * (process_limit, user_processes, command, tcp_port) against a fake root:
 * /proc/<pid>/stat, status, cmdline and fd links, /proc/uptime, meminfo,
 * /proc/net/tcp{,6} and /etc/login.defs written into a temp dir.  Each
 * with the input missing (UNKNOWN), and malformed, hostile and oversized
 * (a comm holding ") R 1", newlines and bytes that are not UTF-8, a stat
 * cut short or naming another pid, a parent loop, a socket table of
 * 70 MB): a clear result, never a crash. */
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/fileio.h"
#include "util/macro.h"

#include "../../modules/health/checks/health-check.h"
#include "../lib/check-run.h"
#include "../lib/fake-root.h"
#include "../lib/health-check-test.h"

static void setup(void) {
        fake_root_make("/tmp/test-health-proc-XXXXXX");
}

static void teardown(void) {
        fake_root_remove();
}

static HealthResult run(const char *type, const char *body) {
        return run_in(root, type, body);
}

/* A process as the kernel shows it: stat with its times (clock ticks),
 * start (ticks after boot), vsize (bytes) and rss (pages); status with
 * its uid; cmdline when @cmdline is not NULL ('|' for each NUL). */
static void proc(unsigned pid, unsigned ppid, const char *comm, unsigned uid, uint64_t utime, uint64_t start,
                 uint64_t vsize, uint64_t rss, const char *cmdline) {
        char rel[64];

        snprintf(rel, sizeof(rel), "/proc/%u/stat", pid);
        put(rel,
            "%u (%s) S %u %u %u 0 -1 4194560 100 0 0 0 %" PRIu64 " 0 0 0 20 0 1 0 %" PRIu64 " %" PRIu64
            " %" PRIu64 " 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n",
            pid, comm, ppid, pid, pid, utime, start, vsize, rss);
        snprintf(rel, sizeof(rel), "/proc/%u/status", pid);
        put(rel, "Name:\t%s\nState:\tS (sleeping)\nPid:\t%u\nPPid:\t%u\nUid:\t%u\t%u\t%u\t%u\n", comm, pid,
            ppid, uid, uid, uid, uid);
        if (cmdline) {
                _cleanup_free_ char *c = strdup(cmdline);

                ck_assert_ptr_nonnull(c);
                for (char *p = c; *p; p++)
                        if (*p == '|')
                                *p = 0;
                snprintf(rel, sizeof(rel), "/proc/%u/cmdline", pid);
                put_bytes(rel, c, strlen(cmdline));
        }
}

static long hz(void) {
        return sysconf(_SC_CLK_TCK);
}

/* ---- process_limit ------------------------------------------------------ */

/* uptime 1000 s; burn (uid 1000) used its whole life's CPU, 500 s of it;
 * idle (uid 1000) almost none; kworker (root) 90% of its life; sysd (uid
 * 500) 80%. */
static void limit_procs(void) {
        long t = hz();

        put("/proc/uptime", "1000.00 3000.00\n");
        proc(100, 1, "burn", 1000, 500 * t, 500 * t, 8ull << 30, (2ull << 30) / 4096,
             "/usr/bin/burn|--hard|");
        proc(101, 1, "idle", 1000, 1, 10 * t, 1ull << 20, 10, "idle|");
        proc(2, 0, "kworker/0:1", 0, 900 * t, 0, 0, 0, "");
        proc(300, 1, "sysd", 500, 800 * t, 0, 1ull << 20, 10, "/sbin/sysd|");
        put("/proc/meminfo", "MemTotal:       8388608 kB\nMemFree:         1000 kB\n");
        mkdirs("/proc/self");
        mkdirs("/proc/net");
}

START_TEST(test_process_limit) {
        limit_procs();
        /* no login.defs: NHC's 99 is the highest system uid, so sysd (500) counts */
        assert_result(
                run("process_limit", "max_cpu_percent: 80\n"), HEALTH_FAIL, "process_limit-cpu",
                "process 'burn' (pid 100) of uid 1000 using 100% CPU over its life (limit 80%); 2 processes "
                "over a limit");
        put("/etc/login.defs", "# SYS_UID_MAX 1\nMAIL_DIR /var/mail\nUID_MIN\t\t\t 1000\nUID_MAX 60000\n");
        /* UID_MIN 1000: system users to 999, sysd among them */
        assert_run("process_limit", "max_cpu_percent: 80\n", HEALTH_FAIL, "process_limit-cpu",
                   "(pid 100) of uid 1000 using 100% CPU over its life (limit 80%)");
        ck_assert(!strstr(run("process_limit", "max_cpu_percent: 80\n").detail, "processes over"));
        assert_run("process_limit", "max_cpu_percent: 90\nuser: 1000\n", HEALTH_FAIL, "process_limit-cpu",
                   "(pid 100)");
        assert_run("process_limit", "max_cpu_percent: 101\n", HEALTH_PASS, "ok",
                   "no process over its limit (2 looked at)");
        /* at the limit is over it, as NHC's -lt */
        assert_run("process_limit", "max_cpu_percent: 100\n", HEALTH_FAIL, "process_limit-cpu", "burn");
        put("/etc/login.defs", "UID_MIN 1000\nSYS_UID_MAX 400\n");
        assert_run("process_limit", "max_cpu_percent: 80\nmatch: sysd\n", HEALTH_FAIL, "process_limit-cpu",
                   "'sysd' (pid 300) of uid 500 using 80% CPU");
        assert_run("process_limit", "max_cpu_percent: 80\nmatch: sysd\nmax_system_uid: 500\n", HEALTH_PASS,
                   "ok", "(0 looked at)");
        /* all_users: root's kernel thread too, "[kworker/0:1]" as ps shows one without a command line */
        assert_run("process_limit", "max_cpu_percent: 85\nall_users: true\nmatch: '^\\[kworker'\n",
                   HEALTH_FAIL, "process_limit-cpu", "'kworker/0:1' (pid 2) of uid 0 using 90% CPU");
        assert_run("process_limit", "max_cpu_percent: 85\nmatch: '^\\[kworker'\n", HEALTH_PASS, "ok",
                   "(0 looked at)");
        /* the first word of the command, or with full_match all of it */
        assert_run("process_limit", "max_cpu_percent: 90\nmatch: '/burn$'\n", HEALTH_FAIL,
                   "process_limit-cpu", "burn");
        assert_run("process_limit", "max_cpu_percent: 90\nmatch: 'burn --hard'\n", HEALTH_PASS, "ok",
                   "(0 looked at)");
        assert_run("process_limit", "max_cpu_percent: 90\nmatch: 'burn --hard'\nfull_match: true\n",
                   HEALTH_FAIL, "process_limit-cpu", "burn");
        assert_run("process_limit", "max_cpu_percent: 90\nuser: 1001\n", HEALTH_PASS, "ok", "of uid 1001");
        /* memory (VSZ), physmem (RSS, or % of MemTotal), time */
        assert_run("process_limit", "max_memory: 4G\n", HEALTH_FAIL, "process_limit-memory",
                   "'burn' (pid 100) of uid 1000 using 8.0G of memory, RAM and swap (limit 4.0G)");
        assert_run("process_limit", "max_memory: 9G\n", HEALTH_PASS, "ok", "no process");
        assert_run("process_limit", "max_physmem: 2G\n", HEALTH_FAIL, "process_limit-physmem",
                   "using 2.0G of RAM (limit 2.0G)");
        assert_run("process_limit", "max_physmem_percent: 25\n", HEALTH_FAIL, "process_limit-physmem",
                   "using 25% of RAM, 2.0G (limit 25%)");
        assert_run("process_limit", "max_physmem_percent: 26\n", HEALTH_PASS, "ok", "no process");
        assert_run("process_limit", "max_time: 5m\n", HEALTH_FAIL, "process_limit-time",
                   "using 8:20 of CPU time (limit 5:00)");
        assert_run("process_limit", "max_time: 15m\n", HEALTH_PASS, "ok", "no process");
        /* the one limit a process passes first is named */
        assert_run("process_limit", "max_time: 10m\nmax_memory: 1G\n", HEALTH_FAIL, "process_limit-memory",
                   "burn");
}
END_TEST

START_TEST(test_process_limit_config) {
        /* what may wait on another process's mmap lock (cmdline) runs in a child */
        ck_assert(health_check_type_find("process_limit")->child);
        ck_assert(!health_check_type_find("user_processes")->child);
        ck_assert(!health_check_type_find("tcp_port")->child);
        assert_refused("process_limit", "", "key 'max_cpu_percent': a limit is required");
        assert_refused("process_limit", "max_cpu_percent: 0\n", "key 'max_cpu_percent'");
        assert_refused("process_limit", "max_physmem_percent: 101\n", "key 'max_physmem_percent'");
        assert_refused("process_limit", "max_physmem: 1G\nmax_physmem_percent: 5\n",
                       "key 'max_physmem_percent': max_physmem or max_physmem_percent, not both");
        assert_refused("process_limit", "max_time: 500ms\n", "key 'max_time': at least 1s");
        assert_refused("process_limit", "max_time: 1m\nmatch: '('\n",
                       "key 'match': '(' is not a POSIX extended regular expression");
        assert_refused("process_limit", "max_time: 1m\nfull_match: true\n", "key 'full_match'");
        assert_refused("process_limit", "max_time: 1m\nuser: no-such-user-sunkd\n",
                       "key 'user': no user 'no-such-user-sunkd'");
        assert_refused("process_limit", "max_time: 1m\nmax_system_uid: -1\n", "key 'max_system_uid'");
}
END_TEST

START_TEST(test_process_limit_bad_input) {
        char big[8192];
        long t = hz();

        assert_run("process_limit", "max_time: 1m\n", HEALTH_UNKNOWN, "process_limit-input-missing",
                   "/proc' is missing");
        mkdirs("/proc/1");
        assert_run("process_limit", "max_cpu_percent: 50\n", HEALTH_UNKNOWN, "process_limit-input-missing",
                   "/proc/uptime' is missing");
        put("/proc/uptime", "soon\n");
        assert_run("process_limit", "max_cpu_percent: 50\n", HEALTH_UNKNOWN, "process_limit-input-bad",
                   "/proc/uptime is not an uptime");
        assert_run("process_limit", "max_physmem_percent: 50\n", HEALTH_UNKNOWN,
                   "process_limit-input-missing", "meminfo");
        put("/proc/meminfo", "MemFree: 1 kB\n");
        assert_run("process_limit", "max_physmem_percent: 50\n", HEALTH_UNKNOWN, "process_limit-input-bad",
                   "no MemTotal");
        put("/proc/uptime", "1000.00 3000.00\n");
        /* a comm holding ") R 1 2 ", a newline and bytes that are not UTF-8: the last ')' ends it */
        proc(100, 1, "a) R 1 2 3 (b\n\xff\xfe", 1000, 900 * t, 0, 0, 0, NULL);
        /* hostile neighbours: a stat cut short, one oversized, one naming
         * another pid, a status without Uid, a pid gone (a directory only),
         * a leading zero, numbers past 64 bits, a stat that is a directory */
        put("/proc/101/stat", "101 (short) S 1 2\n");
        put("/proc/101/status", "Uid:\t1000\t1000\t1000\t1000\n");
        memset(big, '9', sizeof(big));
        put_bytes("/proc/102/stat", big, sizeof(big));
        proc(103, 1, "liar", 1000, 900 * t, 0, 0, 0, NULL);
        put("/proc/103/stat", "104 (liar) S 1 1 1 0 -1 0 0 0 0 0 90000 0 0 0 20 0 1 0 0 0 0\n");
        proc(105, 1, "nouid", 1000, 900 * t, 0, 0, 0, NULL);
        put("/proc/105/status", "Name: nouid\n");
        mkdirs("/proc/106");
        proc(107, 1, "zero", 1000, 900 * t, 0, 0, 0, NULL);
        move_at("/proc/107", "/proc/0107");
        put("/proc/108/stat",
            "108 (huge) S 1 1 1 0 -1 0 0 0 0 0 99999999999999999999999 0 0 0 20 0 1 0 0 0 0\n");
        put("/proc/108/status", "Uid:\t1000\t1000\t1000\t1000\n");
        mkdirs("/proc/109/stat");
        put("/proc/110/stat", "110 (noparen S 1 1 1\n");
        put("/proc/110/status", "Uid:\t1000\t1000\t1000\t1000\n");
        assert_run("process_limit", "max_cpu_percent: 50\n", HEALTH_FAIL, "process_limit-cpu",
                   "process 'a) R 1 2 3 (b\\x0a\\xff\\xfe' (pid 100) of uid 1000 using 90% CPU");
        assert_run("process_limit", "max_cpu_percent: 95\n", HEALTH_PASS, "ok", "(1 looked at)");
}
END_TEST

/* ---- user_processes ---------------------------------------------------- */

static void job_tree(void) {
        proc(1, 0, "systemd", 0, 0, 0, 0, 0, NULL);
        proc(50, 1, "slurmd", 0, 0, 0, 0, 0, NULL);
        proc(60, 50, "slurmstepd", 0, 0, 0, 0, 0, NULL);
        proc(61, 60, "bash", 2000, 0, 0, 0, 0, NULL);
        proc(62, 61, "sleep", 2000, 0, 0, 0, 0, NULL);
        proc(70, 1, "sleep", 2000, 0, 0, 0, 0, NULL);      /* left the job's tree; its user has a job */
        proc(80, 1, "miner", 3000, 0, 0, 0, 0, NULL);      /* a user without a job */
        proc(90, 1, "slurmstepd", 3001, 0, 0, 0, 0, NULL); /* a user's process named like slurmstepd */
        proc(91, 90, "sleep", 3001, 0, 0, 0, 0, NULL);
        proc(95, 1, "sshd", 0, 0, 0, 0, 0, NULL);
        proc(96, 95, "bash", 65534, 0, 0, 0, 0, NULL); /* nobody: NHC's default allows it */
        proc(97, 1, "chronyd", 105, 0, 0, 0, 0, NULL);
        put("/etc/login.defs", "UID_MIN 1000\n");
        mkdirs("/proc/self");
}

START_TEST(test_user_processes) {
        job_tree();
        assert_run("user_processes", "", HEALTH_FAIL, "user_processes-unauthorized",
                   "process 'miner' (pid 80) of uid 3000 whose user has no job on the node; 3 in all");
        assert_run("user_processes", "lineage: true\n", HEALTH_FAIL, "user_processes-unauthorized",
                   "process 'sleep' (pid 70) of uid 2000 was not started by a job; 4 in all");
        assert_run("user_processes", "allowed_users: [root, 3000, 3001, 65534]\n", HEALTH_PASS, "ok",
                   "no process of a user without a job (2 of jobs, of 1 users; 12 processes)");
        assert_run("user_processes", "allowed_users: [3000, 3001, nobody]\nlineage: true\n", HEALTH_FAIL,
                   "user_processes-unauthorized", "(pid 70) of uid 2000 was not started by a job; 1 in all");
        assert_run("user_processes", "ignore_processes: [miner, sleep, slurmstepd]\n", HEALTH_PASS, "ok",
                   "no process");
        /* nobody allowed only by NHC's default */
        assert_run("user_processes", "allowed_users: [3000, 3001]\n", HEALTH_FAIL,
                   "user_processes-unauthorized", "process 'bash' (pid 96) of uid 65534");
        assert_run("user_processes", "max_system_uid: 3001\n", HEALTH_PASS, "ok", "no process");
        /* without login.defs NHC's 99: chronyd (105) is a user's */
        remove_at("/etc/login.defs");
        assert_run("user_processes", "allowed_users: [3000, 3001, 65534]\n", HEALTH_FAIL,
                   "user_processes-unauthorized", "'chronyd' (pid 97) of uid 105");
        put("/etc/login.defs", "SYS_UID_MAX 0\nUID_MIN 200\n");
        assert_run("user_processes", "allowed_users: [3000, 3001, 65534]\n", HEALTH_FAIL,
                   "user_processes-unauthorized", "'chronyd' (pid 97) of uid 105");
        put("/etc/login.defs", "UID_MIN 200\n");
        assert_run("user_processes", "allowed_users: [3000, 3001, 65534]\n", HEALTH_PASS, "ok", "");
        assert_refused("user_processes", "allowed_users: [no-such-user-sunkd]\n",
                       "key 'allowed_users': no user 'no-such-user-sunkd'");
        assert_refused("user_processes", "ignore_processes: [a/b]\n", "key 'ignore_processes': 'a/b'");
        assert_refused("user_processes", "ignore_processes: [a-name-of-sixteen]\n",
                       "key 'ignore_processes'");
        assert_refused("user_processes", "max_system_uid: x\n", "key 'max_system_uid'");
}
END_TEST

START_TEST(test_user_processes_bad_input) {
        assert_run("user_processes", "", HEALTH_UNKNOWN, "user_processes-input-missing",
                   "/proc' is missing");
        mkdirs("/proc");
        assert_run("user_processes", "", HEALTH_PASS, "ok", "0 processes");
        /* a parent loop, a process its own parent, a parent gone: ends, not in a job */
        proc(200, 201, "loop", 4000, 0, 0, 0, 0, NULL);
        proc(201, 200, "loop", 4000, 0, 0, 0, 0, NULL);
        proc(202, 202, "self", 4000, 0, 0, 0, 0, NULL);
        proc(203, 999, "orphan", 4000, 0, 0, 0, 0, NULL);
        /* a stepd below the loop's members does not make them a job's */
        proc(210, 60, "slurmstepd", 0, 0, 0, 0, 0, NULL);
        proc(211, 210, "job", 4001, 0, 0, 0, 0, NULL);
        mkdirs("/proc/212");
        put("/proc/213/stat", "213 (x) S");
        assert_run("user_processes", "allowed_users: []\nmax_system_uid: 99\n", HEALTH_FAIL,
                   "user_processes-unauthorized",
                   "process 'loop' (pid 200) of uid 4000 whose user has no job");
        assert_run("user_processes", "allowed_users: []\nmax_system_uid: 99\nlineage: true\n", HEALTH_FAIL,
                   "user_processes-unauthorized", "; 4 in all");
}
END_TEST

/* ---- tcp_port ----------------------------------------------------------- */

#define TCP_HEAD                                                                                            \
        "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout "       \
        "inode\n"
#define TCP_ROW(sl, laddr, raddr, st, inode)                                                                \
        "   " sl ": " laddr " " raddr " " st                                                                \
        " 00000000:00000000 00:00000000 00000000     0        0 " inode                                     \
        " 1 0000000000000000 100 0 0 10 0\n"
#define V6_ANY "00000000000000000000000000000000"
#define V6_LO "00000000000000000000000001000000"

static void tcp_tables(void) {
        put("/proc/net/tcp", "%s%s%s%s", TCP_HEAD,
            TCP_ROW("0", "0100007F:1F90", "00000000:0000", "0A", "111"),
            TCP_ROW("1", "00000000:0016", "00000000:0000", "0A", "222"),
            TCP_ROW("2", "0500000A:1388", "0100000A:D431", "01", "0"));
        put("/proc/net/tcp6", "%s%s%s", TCP_HEAD, TCP_ROW("0", V6_LO ":2382", V6_ANY ":0000", "0A", "333"),
            TCP_ROW("1", V6_ANY ":0016", V6_ANY ":0000", "0A", "444"));
}

static void link_socket(unsigned pid, unsigned fd, const char *inode) {
        char rel[64], target[64];

        snprintf(rel, sizeof(rel), "/proc/%u/fd/%u", pid, fd);
        snprintf(target, sizeof(target), "socket:[%s]", inode);
        link_at(target, rel);
}

START_TEST(test_tcp_port) {
        tcp_tables();
        assert_run("tcp_port", "port: 8080\n", HEALTH_PASS, "ok", "TCP port 8080 is listening on 127.0.0.1");
        assert_run("tcp_port", "port: 5000\n", HEALTH_FAIL, "tcp_port-closed",
                   "nothing listens on TCP port 5000");
        assert_run("tcp_port", "port: 22\naddress: 10.1.2.3\n", HEALTH_PASS, "ok", "listening on 0.0.0.0");
        assert_run("tcp_port", "port: 8080\naddress: 10.0.0.1\n", HEALTH_FAIL, "tcp_port-closed",
                   "nothing listens on TCP port 8080 on 10.0.0.1");
        assert_run("tcp_port", "port: 8080\naddress: 127.0.0.1\n", HEALTH_PASS, "ok", "127.0.0.1");
        assert_run("tcp_port", "port: 9090\naddress: '::1'\n", HEALTH_PASS, "ok", "listening on ::1");
        assert_run("tcp_port", "port: 8080\naddress: '::1'\n", HEALTH_FAIL, "tcp_port-closed", "on ::1");
        assert_run("tcp_port", "port: 22\naddress: 'fe80::1'\n", HEALTH_PASS, "ok", "");
        assert_run("tcp_port", "port: 8080\nlistening: false\n", HEALTH_FAIL, "tcp_port-open",
                   "TCP port 8080 is listening (on 127.0.0.1), and should not");
        assert_run("tcp_port", "port: 5000\nlistening: false\n", HEALTH_PASS, "ok", "nothing listens");
        /* the owner, by its socket's inode among a process's fd links */
        proc(300, 1, "sshd", 0, 0, 0, 0, 0, NULL);
        link_socket(300, 3, "222");
        link_socket(300, 4, "444");
        put("/proc/300/fd/0", "not a link\n");
        proc(301, 1, "python3", 1000, 0, 0, 0, 0, NULL);
        link_socket(301, 7, "111");
        proc(302, 1, "nginx", 0, 0, 0, 0, 0, NULL);
        mkdirs("/proc/302/fd");
        assert_run("tcp_port", "port: 22\nprocess: sshd\n", HEALTH_PASS, "ok",
                   "TCP port 22 is listening on 0.0.0.0, held by 'sshd' (pid 300)");
        assert_run("tcp_port", "port: 8080\nprocess: nginx\n", HEALTH_FAIL, "tcp_port-owner",
                   "TCP port 8080 is held by 'python3', not 'nginx'");
        assert_run("tcp_port", "port: 9090\nprocess: nginx\n", HEALTH_FAIL, "tcp_port-owner",
                   "listening, but no 'nginx' process holds it");
        /* no tcp6: IPv4 still answers, an IPv6 address cannot */
        remove_at("/proc/net/tcp6");
        assert_run("tcp_port", "port: 8080\n", HEALTH_PASS, "ok", "");
        assert_run("tcp_port", "port: 9090\naddress: '::1'\n", HEALTH_UNKNOWN, "tcp_port-input-missing",
                   "tcp6' is missing");
        assert_refused("tcp_port", "", "key 'port'");
        assert_refused("tcp_port", "port: 0\n", "key 'port'");
        assert_refused("tcp_port", "port: 65536\n", "key 'port'");
        assert_refused("tcp_port", "port: 22\naddress: localhost\n",
                       "key 'address': 'localhost' is not an IPv4 or IPv6 address");
        assert_refused("tcp_port", "port: 22\nprocess: a-name-of-sixteen\n", "key 'process'");
        assert_refused("tcp_port", "port: 22\nprocess: sshd\nlistening: false\n", "key 'process'");
}
END_TEST

START_TEST(test_tcp_port_bad_input) {
        _cleanup_free_ char *big = NULL, *tcp = at("/proc/net/tcp");
        _cleanup_fclose_ FILE *f = NULL;
        char row[256];

        assert_run("tcp_port", "port: 22\n", HEALTH_UNKNOWN, "tcp_port-input-missing", "tcp' is missing");
        put_bytes("/proc/net/tcp", "", 0);
        assert_run("tcp_port", "port: 22\n", HEALTH_UNKNOWN, "tcp_port-input-bad", "holds no socket table");
        put("/proc/net/tcp", "%sgarbage\n   0: 0100007F:1F9 00000000:0000 0A\n\xff\xfe\n", TCP_HEAD);
        assert_run("tcp_port", "port: 22\n", HEALTH_UNKNOWN, "tcp_port-input-bad", "holds no socket table");
        /* malformed rows beside sound ones are skipped: a NUL, a short address, hex past its width, no inode
         */
        put_bytes("/proc/net/tcp", TCP_HEAD "   0: 0100007F:0016\0 00000000:0000 0A\n",
                  sizeof(TCP_HEAD) + 37);
        assert_run("tcp_port", "port: 22\n", HEALTH_UNKNOWN, "tcp_port-input-bad", "");
        put("/proc/net/tcp", "%s%s%s%s%s", TCP_HEAD,
            TCP_ROW("0", "0100007F:00016", "00000000:0000", "0A", "1"),
            TCP_ROW("1", "0100007FF:0016", "00000000:0000", "0A", "1"),
            "   2: 0100007F:0016 00000000:0000 0A 00000000:00000000\n",
            TCP_ROW("3", "0100007F:1F90", "00000000:0000", "0A", "111"));
        assert_run("tcp_port", "port: 22\n", HEALTH_FAIL, "tcp_port-closed", "port 22");
        assert_run("tcp_port", "port: 8080\n", HEALTH_PASS, "ok", "");
        /* a line longer than the line reader's buffer, then a listener */
        big = malloc(200 * 1024);
        ck_assert_ptr_nonnull(big);
        memset(big, 'x', 200 * 1024 - 1);
        big[200 * 1024 - 1] = 0;
        put("/proc/net/tcp", "%s%s\n%s", TCP_HEAD, big,
            TCP_ROW("1", "00000000:0016", "00000000:0000", "0A", "2"));
        assert_run("tcp_port", "port: 22\n", HEALTH_PASS, "ok", "");
        /* a table past CHECK_INPUT_MAX (64 MiB), as no kernel writes: UNKNOWN, not read forever */
        f = fopen(tcp, "we");
        ck_assert_ptr_nonnull(f);
        fputs(TCP_HEAD, f);
        snprintf(row, sizeof(row), "%s", TCP_ROW("1", "0500000A:1388", "0100000A:D431", "01", "0"));
        for (size_t n = 0; n < (70u << 20) / strlen(row); n++)
                fputs(row, f);
        ck_assert_int_eq(fclose(TAKE_PTR(f)), 0);
        assert_run("tcp_port", "port: 22\n", HEALTH_UNKNOWN, "tcp_port-input-bad", "too large");
}
END_TEST

START_TEST(test_tcp_port_genconf) {
        const HealthCheckType *t = health_check_type_find("tcp_port");
        HealthEnv env = { .root = root };
        HealthGenconf g = {};

        ck_assert_ptr_nonnull(t->genconf);
        ck_assert_int_eq(t->genconf(&env, &g), -ENOENT); /* no /proc */
        health_genconf_clear(&g);
        tcp_tables();
        ck_assert_int_eq(t->genconf(&env, &g), 0);
        ck_assert_uint_eq(g.n, 0); /* no sshd: nothing */
        proc(300, 1, "sshd", 0, 0, 0, 0, 0, NULL);
        link_socket(300, 3, "222");
        link_socket(300, 4, "444");
        proc(301, 1, "sshd", 1000, 0, 0, 0, 0, NULL); /* a user's "sshd": not the daemon */
        link_socket(301, 3, "111");
        ck_assert_int_eq(t->genconf(&env, &g), 0);
        ck_assert_uint_eq(g.n, 1);
        ck_assert_str_eq(g.entries[0], "{name: tcp-22, type: tcp_port, port: 22, process: sshd}");
        /* the baseline passes on the node it came from */
        assert_run("tcp_port", "port: 22\nprocess: sshd\n", HEALTH_PASS, "ok", "held by 'sshd'");
        health_genconf_clear(&g);
        ck_assert_ptr_null(health_check_type_find("process_limit")->genconf);
        ck_assert_ptr_null(health_check_type_find("user_processes")->genconf);
        ck_assert_ptr_null(health_check_type_find("command")->genconf);
}
END_TEST

/* ---- command ------------------------------------------------------------ */

/* The result of a command check of @body that exited @code with @out. */
static HealthResult judge(const char *body, int code, const char *out, size_t len, bool truncated) {
        _cleanup_free_ char *e = NULL, *yaml = NULL;
        sunkd_spawn_result res = { .exit_code = code,
                                   .output = out,
                                   .output_len = len,
                                   .output_truncated = truncated,
                                   .err_output = "" };
        HealthResult hr = { .status = 99 };
        Loaded l;

        ck_assert_int_ge(asprintf(&yaml, "path: /bin/true\n%s", body), 0);
        ck_assert_msg(load("command", yaml, &l, &e) == 0, "%s: %s", body, e);
        ck_assert_ptr_nonnull(l.type->judge);
        l.type->judge(l.conf, &res, &hr);
        unload(&l);
        for (const char *p = hr.detail; *p; p++)
                ck_assert_msg((unsigned char) *p >= 0x20 && *p != 0x7f, "control byte in '%s'", hr.detail);
        return hr;
}

#define J(body, code, out) judge((body), (code), (out), strlen(out), false)

START_TEST(test_command) {
        static const char smi[] =
                "GPU 0: H100 (UUID: GPU-1)\nGPU 1: H100 (UUID: GPU-2)\nPersistence Mode: Enabled\n";
        const HealthCheckType *t = health_check_type_find("command");
        Loaded l;
        _cleanup_free_ char *e = NULL;

        ck_assert_int_eq(t->runner, HEALTH_RUNNER_SCRIPT);
        ck_assert_ptr_null(t->run);
        /* NHC's default timeout */
        ck_assert_int_eq(load("command", "path: /bin/true\n", &l, &e), 0);
        ck_assert_uint_eq(((HealthCheckCommon *) l.conf)->timeout_usec, 5 * 1000000ull);
        unload(&l);
        /* check_cmd_status: the exit status alone */
        assert_result(J("", 0, ""), HEALTH_PASS, "ok", "/bin/true exited 0");
        assert_result(J("", 1, "why\n"), HEALTH_FAIL, "command-status",
                      "/bin/true exited 1 (expected 0): why");
        assert_result(J("status: 3\n", 3, ""), HEALTH_PASS, "ok", "exited 3");
        assert_result(J("status: 3\n", 0, ""), HEALTH_FAIL, "command-status", "exited 0 (expected 3)");
        /* check_cmd_output: each pattern some line; a '!' one no line */
        assert_result(J("match: ['^GPU 1:', 'Persistence Mode: Enabled']\n", 0, smi), HEALTH_PASS, "ok",
                      "exited 0: Persistence Mode: Enabled");
        assert_result(J("match: ['^GPU 2:']\n", 0, smi), HEALTH_FAIL, "command-nomatch",
                      "'^GPU 2:' matched no line of /bin/true's output (1 of 1 patterns failed)");
        assert_result(J("match: ['^GPU 0', '^GPU 2:', '^GPU 3:', '!Disabled']\n", 0, smi), HEALTH_FAIL,
                      "command-nomatch",
                      "'^GPU 2:' matched no line of /bin/true's output (2 of 4 patterns failed)");
        assert_result(J("match: ['^GPU', '!H100 .*GPU-2']\n", 0, smi), HEALTH_FAIL, "command-match",
                      "'H100 .*GPU-2' matched line 2 of /bin/true: GPU 1: H100 (UUID: GPU-2)");
        assert_result(J("match: ['!Disabled']\n", 0, smi), HEALTH_PASS, "ok", "");
        /* a negated match that hits comes before the status, the status before a pattern that missed */
        assert_result(J("match: ['!GPU 0', 'nothing']\n", 1, smi), HEALTH_FAIL, "command-match", "line 1");
        assert_result(J("match: ['nothing']\n", 1, smi), HEALTH_FAIL, "command-status", "exited 1");
        /* output that is not text: NUL bytes end what a line matches, control bytes are escaped */
        assert_result(judge("match: ['^tail$']\n", 0, "he\0ad\ntail\n", 10, false), HEALTH_PASS, "ok",
                      "tail");
        assert_result(judge("match: ['^ad']\n", 0, "he\0ad\ntail\n", 10, false), HEALTH_FAIL,
                      "command-nomatch", "");
        assert_result(J("match: ['!\\x1b']\n", 0, "ok\n\x1b[31mred\xff\n"), HEALTH_PASS, "ok",
                      "\\x1b[31mred\\xff");
        assert_result(J("match: ['!red']\n", 0, "ok\n\x1b[31mred\xff\n"), HEALTH_FAIL, "command-match",
                      "line 2 of /bin/true: \\x1b[31mred\\xff");
        assert_result(judge("match: ['^head']\n", 0, "tail\n", 5, true), HEALTH_FAIL, "command-nomatch",
                      "only the end of a long output was read");
        assert_result(J("match: ['x']\n", 0, ""), HEALTH_FAIL, "command-nomatch", "'x' matched no line");
        assert_refused("command", "path: /bin/true\nmatch: ['!(']\n",
                       "key 'match': '(' is not a POSIX extended regular expression");
        assert_refused("command", "path: /bin/true\nstatus: 256\n", "key 'status'");
        assert_refused("command", "match: [x]\n", "key 'path'");
        assert_refused("command", "path: bin/true\n", "key 'path'");
}
END_TEST

static Suite *suite(void) {
        Suite *s = suite_create("health-proc-checks");
        TCase *tc = tcase_create("checks");

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_set_timeout(tc, 120);
        tcase_add_test(tc, test_process_limit);
        tcase_add_test(tc, test_process_limit_config);
        tcase_add_test(tc, test_process_limit_bad_input);
        tcase_add_test(tc, test_user_processes);
        tcase_add_test(tc, test_user_processes_bad_input);
        tcase_add_test(tc, test_tcp_port);
        tcase_add_test(tc, test_tcp_port_bad_input);
        tcase_add_test(tc, test_tcp_port_genconf);
        tcase_add_test(tc, test_command);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return check_run(suite());
}
