/* The `tcp_port` check, NHC's check_net_socket for TCP: something listens
 * on `port`, read from <root>/proc/net/tcp and tcp6 (state 0A, LISTEN)
 * rather than from netstat's or ss's text.  With `address` the listener
 * must take connections to that address: bound to it, or to the wildcard
 * of its family (0.0.0.0, ::), which NHC's match on netstat's text would
 * not count; a connection to the address would find the listener, which is
 * what the check asks.  [::] is not taken to serve IPv4: sshd and most
 * daemons bind it IPV6_V6ONLY beside 0.0.0.0, and /proc/net/tcp6 cannot
 * tell.  With `process` (NHC's -d) a process of that name must hold the
 * listening socket (its inode among /proc/<pid>/fd's links).  With
 * `listening: false` (NHC's -!) a listener fails the check instead.  NHC
 * may run an action (-e, -E); sunkd only reports.  The kernel lists the
 * listening sockets before the others, but nothing here depends on it: a
 * table of any length is read to the end, CHECK_INPUT_MAX at most. */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/macro.h"

#include "check-proc.h"

#define INODES_MAX 64

typedef struct TcpPortConf {
        HealthCheckCommon common;
        int64_t port;
        char *address;
        char *process;
        bool listening;
        /* from validate */
        int family; /* AF_INET, AF_INET6, or 0 for any address */
        unsigned char addr[16];
} TcpPortConf;

static const sunkd_cfg_key tcp_port_keys[] = {
        HEALTH_COMMON_KEYS,
        { "port", SUNKD_CFG_INT, offsetof(TcpPortConf, port), SUNKD_CFG_REQUIRED, 1, 65535 },
        { "address", SUNKD_CFG_STRING, offsetof(TcpPortConf, address), 0, 0, 0 },
        { "process", SUNKD_CFG_STRING, offsetof(TcpPortConf, process), 0, 0, 0 },
        { "listening", SUNKD_CFG_BOOL, offsetof(TcpPortConf, listening), 0, 0, 0 },
};

static void tcp_port_defaults(void *conf) {
        ((TcpPortConf *) conf)->listening = true;
}

static int tcp_port_validate(void *conf, char **ret_error) {
        TcpPortConf *c = conf;

        if (c->address) {
                if (inet_pton(AF_INET, c->address, c->addr) == 1)
                        c->family = AF_INET;
                else if (inet_pton(AF_INET6, c->address, c->addr) == 1)
                        c->family = AF_INET6;
                else
                        return check_invalid(ret_error, "address",
                                             "'%s' is not an IPv4 or IPv6 address (a name is not resolved)",
                                             c->address);
        }
        if (c->process && (isempty(c->process) || strlen(c->process) > CHECK_PROC_COMM_MAX ||
                           strchr(c->process, '/') || strchr(c->process, '\n')))
                return check_invalid(
                        ret_error, "process",
                        "'%s' is not a process name: the kernel keeps 1 to %d bytes of it, no '/'",
                        c->process, CHECK_PROC_COMM_MAX);
        if (c->process && !c->listening)
                return check_invalid(ret_error, "process",
                                     "a port that must not listen has no process to name");
        return 0;
}

/* One row of /proc/net/tcp{,6}. */
typedef struct TcpRow {
        int family;
        unsigned char addr[16];
        unsigned port, state;
        uint64_t inode;
} TcpRow;

static int hex_bytes(const char *s, size_t n, unsigned char *out) {
        /* each 8 hex digits are a u32 as the kernel holds it: its bytes are the address's */
        for (size_t w = 0; w < n / 8; w++) {
                char word[9];
                char *end;
                uint32_t v;

                memcpy(word, s + w * 8, 8);
                word[8] = 0;
                if (strspn(word, "0123456789abcdefABCDEF") != 8)
                        return -EBADMSG;
                v = (uint32_t) strtoul(word, &end, 16);
                memcpy(out + w * 4, &v, 4);
        }
        return 0;
}

/* "  0: 0100007F:1F90 00000000:0000 0A ... uid timeout inode ..." */
static int check_tcp_parse_row(const char *line, int family, TcpRow *ret) {
        size_t alen = family == AF_INET ? 8 : 32, n;
        const char *p = line;
        uint64_t v;

        *ret = (TcpRow){ .family = family };
        p += strspn(p, " ");
        n = strspn(p, "0123456789");
        if (n == 0 || p[n] != ':' || p[n + 1] != ' ')
                return -EBADMSG;
        p += n + 2;
        if (strspn(p, "0123456789abcdefABCDEF") != alen || p[alen] != ':' ||
            hex_bytes(p, alen, ret->addr) < 0)
                return -EBADMSG;
        p += alen + 1;
        if (strspn(p, "0123456789abcdefABCDEF") != 4 || p[4] != ' ')
                return -EBADMSG;
        ret->port = (unsigned) strtoul((char[5]){ p[0], p[1], p[2], p[3], 0 }, NULL, 16);
        p += 5;
        if (strspn(p, "0123456789abcdefABCDEF") != alen || p[alen] != ':')
                return -EBADMSG;
        p += alen + 1 + 4; /* the remote port */
        if (*p != ' ' || strspn(p + 1, "0123456789abcdefABCDEF") != 2 || p[3] != ' ')
                return -EBADMSG;
        ret->state = (unsigned) strtoul((char[3]){ p[1], p[2], 0 }, NULL, 16);
        p += 3;
        /* tx:rx, tr:when, retrnsmt, uid, timeout, then the inode */
        for (int field = 0; field < 6; field++) {
                p += strspn(p, " ");
                n = strcspn(p, " ");
                if (n == 0)
                        return -EBADMSG;
                if (field == 5) {
                        if (strspn(p, "0123456789") != n || n > 19)
                                return -EBADMSG;
                        v = strtoull(p, NULL, 10);
                        ret->inode = v;
                }
                p += n;
        }
        return 0;
}

static bool addr_any(const TcpRow *r) {
        static const unsigned char zero[16] = {};

        return memcmp(r->addr, zero, r->family == AF_INET ? 4 : 16) == 0;
}

typedef struct Found {
        unsigned listeners;
        uint64_t inodes[INODES_MAX];
        size_t n_inodes;
        char where[INET6_ADDRSTRLEN + 8];
} Found;

static bool row_matches(const TcpPortConf *c, const TcpRow *r) {
        if (r->state != 0x0A || r->port != (unsigned) c->port)
                return false;
        if (c->family == 0)
                return true;
        if (c->family != r->family)
                return false;
        return addr_any(r) || memcmp(r->addr, c->addr, c->family == AF_INET ? 4 : 16) == 0;
}

/* The listeners of @c in <root>@rel; 1, or 0 with the result set for a table that is not there. */
static int read_table(const TcpPortConf *c, const HealthEnv *env, const char *rel, int family, Found *f,
                      unsigned *ret_rows, HealthResult *ret) {
        CheckLines l = CHECK_LINES_INIT;
        char path[CHECK_PATH_MAX];
        char *line;
        size_t len;
        unsigned lineno = 0, bad = 0;
        int r;

        r = check_path(path, env, rel);
        if (r >= 0)
                r = check_lines_open(&l, path);
        if (r < 0)
                return check_input_error(ret, "tcp_port", r == -ENAMETOOLONG ? rel : path, r);
        while ((r = check_lines_next(&l, &line, &len)) > 0) {
                TcpRow row;

                if (lineno++ == 0)
                        continue; /* the header */
                if (strlen(line) != len || check_tcp_parse_row(line, family, &row) < 0) {
                        bad++;
                        continue;
                }
                (*ret_rows)++;
                if (!row_matches(c, &row))
                        continue;
                if (f->listeners++ == 0)
                        (void) inet_ntop(family, row.addr, f->where, sizeof(f->where));
                if (f->n_inodes < INODES_MAX && row.inode != 0)
                        f->inodes[f->n_inodes++] = row.inode;
        }
        check_lines_close(&l);
        if (r < 0)
                return check_input_error(ret, "tcp_port", path, r);
        if (lineno == 0 || (bad > 0 && *ret_rows == 0))
                return check_input_bad(ret, "tcp_port", "'%s' holds no socket table", path);
        return 1;
}

/* Whether a link in <root>/proc/@pid/fd is one of @f's sockets. */
static bool holds_socket(const HealthEnv *env, const char *pid, const Found *f) {
        _cleanup_closedir_ DIR *d = NULL;
        char rel[64], dir[CHECK_PATH_MAX];
        struct dirent *de;

        if (snprintf(rel, sizeof(rel), "/proc/%s/fd", pid) >= (int) sizeof(rel) ||
            check_path(dir, env, rel) < 0)
                return false;
        d = opendir(dir);
        if (!d)
                return false; /* gone, or not ours to read */
        while ((de = readdir(d))) {
                char target[64];
                ssize_t n;
                uint64_t inode;

                if (de->d_name[0] == '.')
                        continue;
                n = readlinkat(dirfd(d), de->d_name, target, sizeof(target) - 1);
                if (n <= 0)
                        continue;
                target[n] = 0;
                if (sscanf(target, "socket:[%" SCNu64 "]", &inode) != 1)
                        continue;
                for (size_t i = 0; i < f->n_inodes; i++)
                        if (f->inodes[i] == inode)
                                return true;
        }
        return false;
}

typedef struct Owner {
        const HealthEnv *env;
        const Found *f;
        const char *process; /* a name to look for, or NULL for whoever */
        CheckProc found;
        bool have;
        unsigned others;
        char other[sizeof(((CheckProc *) NULL)->comm)];
} Owner;

static int owner_look(const char *pid, void *userdata) {
        Owner *o = userdata;
        CheckProc p;
        int r;

        r = check_proc_read(o->env, pid, &p);
        if (r == -ENOMEM)
                return r;
        if (r < 0 || !holds_socket(o->env, pid, o->f))
                return 0;
        if (!o->process || streq(p.comm, o->process)) {
                o->found = p;
                o->have = true;
                return -ECANCELED; /* found: the walk may stop */
        }
        if (o->others++ == 0)
                memcpy(o->other, p.comm, sizeof(o->other));
        return 0;
}

static int tcp_port_run(const void *conf, const HealthEnv *env, HealthResult *ret) {
        const TcpPortConf *c = conf;
        Found f = {};
        Owner o = { .env = env, .f = &f, .process = c->process };
        unsigned rows = 0;
        char on[INET6_ADDRSTRLEN + 8] = "";
        int r;

        r = read_table(c, env, "/proc/net/tcp", AF_INET, &f, &rows, ret);
        if (r <= 0)
                return r;
        r = read_table(c, env, "/proc/net/tcp6", AF_INET6, &f, &rows, ret);
        if (r == 0 && streq(ret->code, "tcp_port-input-missing") && c->family != AF_INET6)
                r = 1; /* a kernel without IPv6 */
        if (r <= 0)
                return r;
        if (c->address)
                snprintf(on, sizeof(on), " on %s", c->address);
        if (!c->listening) {
                if (f.listeners == 0)
                        health_result_set(ret, HEALTH_PASS, "ok",
                                          "nothing listens on TCP port %" PRId64 "%s", c->port, on);
                else
                        health_result_set(ret, HEALTH_FAIL, "tcp_port-open",
                                          "TCP port %" PRId64 "%s is listening (on %s), and should not",
                                          c->port, on, f.where);
                return 0;
        }
        if (f.listeners == 0) {
                health_result_set(ret, HEALTH_FAIL, "tcp_port-closed",
                                  "nothing listens on TCP port %" PRId64 "%s", c->port, on);
                return 0;
        }
        if (!c->process) {
                health_result_set(ret, HEALTH_PASS, "ok", "TCP port %" PRId64 " is listening on %s", c->port,
                                  f.where);
                return 0;
        }
        r = check_proc_scan(env, "tcp_port", owner_look, &o, ret);
        if (r == 0 || r == -ENOMEM)
                return r;
        if (o.have)
                health_result_set(ret, HEALTH_PASS, "ok",
                                  "TCP port %" PRId64 " is listening on %s, held by '%s' (pid %u)", c->port,
                                  f.where, o.found.comm, o.found.pid);
        else if (o.others > 0)
                health_result_set(ret, HEALTH_FAIL, "tcp_port-owner",
                                  "TCP port %" PRId64 "%s is held by '%s', not '%s'", c->port, on, o.other,
                                  c->process);
        else
                health_result_set(ret, HEALTH_FAIL, "tcp_port-owner",
                                  "TCP port %" PRId64 "%s is listening, but no '%s' process holds it",
                                  c->port, on, c->process);
        return 0;
}

/* The ports root's sshd listens on, as a baseline (NHC's genconf looks for
 * sshd too): one check each, with the process named. */
typedef struct SshdPorts {
        const HealthEnv *env;
        uint64_t inodes[INODES_MAX];
        size_t n_inodes;
} SshdPorts;

static int sshd_look(const char *pid, void *userdata) {
        SshdPorts *s = userdata;
        _cleanup_closedir_ DIR *d = NULL;
        char rel[64], dir[CHECK_PATH_MAX];
        struct dirent *de;
        CheckProc p;
        int r;

        r = check_proc_read(s->env, pid, &p);
        if (r == -ENOMEM)
                return r;
        if (r < 0 || p.euid != 0 || !streq(p.comm, "sshd"))
                return 0;
        if (snprintf(rel, sizeof(rel), "/proc/%s/fd", pid) >= (int) sizeof(rel) ||
            check_path(dir, s->env, rel) < 0)
                return 0;
        d = opendir(dir);
        if (!d)
                return 0;
        while ((de = readdir(d)) && s->n_inodes < INODES_MAX) {
                char target[64];
                ssize_t n = readlinkat(dirfd(d), de->d_name, target, sizeof(target) - 1);
                uint64_t inode;

                if (n <= 0)
                        continue;
                target[n] = 0;
                if (sscanf(target, "socket:[%" SCNu64 "]", &inode) == 1)
                        s->inodes[s->n_inodes++] = inode;
        }
        return 0;
}

static int tcp_port_genconf(const HealthEnv *env, HealthGenconf *out) {
        static const struct {
                const char *rel;
                int family;
        } tables[] = { { "/proc/net/tcp", AF_INET }, { "/proc/net/tcp6", AF_INET6 } };
        SshdPorts s = { .env = env };
        unsigned ports[INODES_MAX];
        size_t n_ports = 0;
        HealthResult ignored;
        int r;

        r = check_proc_scan(env, "tcp_port", sshd_look, &s, &ignored);
        if (r == 0)
                return -ENOENT; /* no /proc to read */
        if (r < 0)
                return r;
        for (size_t t = 0; t < ELEMENTSOF(tables); t++) {
                CheckLines l = CHECK_LINES_INIT;
                char path[CHECK_PATH_MAX], *line;
                size_t len;

                if (check_path(path, env, tables[t].rel) < 0 || check_lines_open(&l, path) < 0)
                        continue;
                while (check_lines_next(&l, &line, &len) > 0) {
                        TcpRow row;
                        bool seen = false;

                        if (strlen(line) != len || check_tcp_parse_row(line, tables[t].family, &row) < 0 ||
                            row.state != 0x0A)
                                continue;
                        for (size_t i = 0; i < s.n_inodes; i++)
                                seen = seen || s.inodes[i] == row.inode;
                        for (size_t i = 0; seen && i < n_ports; i++)
                                seen = ports[i] != row.port;
                        if (seen && n_ports < ELEMENTSOF(ports))
                                ports[n_ports++] = row.port;
                }
                check_lines_close(&l);
        }
        for (size_t i = 0; i < n_ports; i++) {
                r = health_genconf_add(out, "{name: tcp-%u, type: tcp_port, port: %u, process: sshd}",
                                       ports[i], ports[i]);
                if (r < 0)
                        return r;
        }
        return 0;
}

const HealthCheckType health_check_tcp_port = {
        .name = "tcp_port",
        .keys = tcp_port_keys,
        .n_keys = ELEMENTSOF(tcp_port_keys),
        .conf_size = sizeof(TcpPortConf),
        .defaults = tcp_port_defaults,
        .validate = tcp_port_validate,
        .run = tcp_port_run,
        .genconf = tcp_port_genconf,
        .child = false,
};
