/* The `process_limit` check, NHC's check_ps_cpu, check_ps_mem,
 * check_ps_physmem and check_ps_time in one: a process over a limit fails
 * it.  Each limit keeps NHC's meaning, read from <root>/proc/<pid>/stat
 * (and status for the owner) instead of ps's columns:
 *   max_cpu_percent      ps's %CPU: the CPU time used over the process's
 *                        whole life (utime + stime over the time since it
 *                        started), not a recent rate; a threaded process
 *                        may pass 100.  Its integer part is compared.
 *   max_memory           check_ps_mem: the virtual size (ps's VSZ, "RAM +
 *                        swap" in NHC's words).
 *   max_physmem          check_ps_physmem: the resident size (ps's RSS);
 *   max_physmem_percent  or that share of MemTotal (ps's %MEM, integer part).
 *   max_time             check_ps_time: CPU time used (ps's bsdtime, user +
 *                        system), in whole seconds.
 * A process at its limit is over it, as in NHC.  As NHC, processes of
 * system users (uid at most max_system_uid, by default NHC's: login.defs's
 * SYS_UID_MAX, else UID_MIN - 1, else 99) are left out unless all_users
 * (NHC's -A); `user` (-u) and `match` (-m, an extended regular expression
 * on the command's first word, or with full_match (-f) on the whole
 * command line) narrow the processes looked at.  NHC may kill (-k, -K),
 * renice (-r) or run an action (-e): sunkd only reports, the module's
 * actions decide what follows.  The detail names the lowest pid over a
 * limit, the first ps would list and NHC would die on, and how many are. */
#include <errno.h>
#include <inttypes.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/macro.h"

#include "check-proc.h"

#define ARGS_MAX 1024
#define MEMINFO_MAX (64 * 1024)

typedef struct ProcessLimitConf {
        HealthCheckCommon common;
        int64_t max_cpu_percent;
        uint64_t max_memory, max_physmem;
        int64_t max_physmem_percent;
        uint64_t max_time_usec;
        char *user;
        char *match;
        bool full_match, all_users;
        int64_t max_system_uid; /* -1: NHC's, from login.defs at each run */
        /* from validate */
        uid_t uid;
        regex_t re;
        bool compiled;
} ProcessLimitConf;

static const sunkd_cfg_key process_limit_keys[] = {
        HEALTH_COMMON_KEYS,
        { "max_cpu_percent", SUNKD_CFG_INT, offsetof(ProcessLimitConf, max_cpu_percent), 0, 1, 1000000 },
        { "max_memory", SUNKD_CFG_SIZE, offsetof(ProcessLimitConf, max_memory), 0, 0, 0 },
        { "max_physmem", SUNKD_CFG_SIZE, offsetof(ProcessLimitConf, max_physmem), 0, 0, 0 },
        { "max_physmem_percent", SUNKD_CFG_INT, offsetof(ProcessLimitConf, max_physmem_percent), 0, 1, 100 },
        { "max_time", SUNKD_CFG_DURATION, offsetof(ProcessLimitConf, max_time_usec), 0, 0, 0 },
        { "user", SUNKD_CFG_STRING, offsetof(ProcessLimitConf, user), 0, 0, 0 },
        { "match", SUNKD_CFG_STRING, offsetof(ProcessLimitConf, match), 0, 0, 0 },
        { "full_match", SUNKD_CFG_BOOL, offsetof(ProcessLimitConf, full_match), 0, 0, 0 },
        { "all_users", SUNKD_CFG_BOOL, offsetof(ProcessLimitConf, all_users), 0, 0, 0 },
        { "max_system_uid", SUNKD_CFG_INT, offsetof(ProcessLimitConf, max_system_uid), 0, 0,
          UINT32_MAX - 1 },
};

static void process_limit_defaults(void *conf) {
        ((ProcessLimitConf *) conf)->max_system_uid = -1;
}

static int process_limit_validate(void *conf, char **ret_error) {
        ProcessLimitConf *c = conf;
        int r;

        if (c->max_cpu_percent == 0 && c->max_memory == 0 && c->max_physmem == 0 &&
            c->max_physmem_percent == 0 && c->max_time_usec == 0)
                return check_invalid(ret_error, "max_cpu_percent",
                                     "a limit is required: max_cpu_percent, max_memory, max_physmem, "
                                     "max_physmem_percent or max_time");
        if (c->max_physmem > 0 && c->max_physmem_percent > 0)
                return check_invalid(ret_error, "max_physmem_percent",
                                     "max_physmem or max_physmem_percent, not both");
        if (c->max_time_usec > 0 && c->max_time_usec < SUNKD_USEC_PER_SEC)
                return check_invalid(ret_error, "max_time", "at least 1s: CPU time is counted in seconds");
        if (c->user) {
                r = check_proc_resolve_user("user", c->user, &c->uid, ret_error);
                if (r < 0)
                        return r;
        }
        if (c->full_match && !c->match)
                return check_invalid(ret_error, "full_match",
                                     "there is no match to make on the full command line");
        if (c->match) {
                r = check_regcomp(&c->re, "match", c->match, REG_NOSUB, ret_error);
                if (r < 0)
                        return r;
                c->compiled = true;
        }
        return 0;
}

static void process_limit_release(void *conf) {
        ProcessLimitConf *c = conf;

        if (c->compiled)
                regfree(&c->re);
        c->compiled = false;
}

typedef struct Scan {
        const ProcessLimitConf *c;
        const HealthEnv *env;
        uid_t max_sys_uid;
        uint64_t uptime, mem_total; /* ticks; bytes, 0 when not needed */
        long hz, page;
        unsigned over, looked;
        CheckProc worst; /* the lowest pid over a limit */
        const char *code;
        char what[128];
        int error;
} Scan;

/* Whether @p is over a limit: the code and what it uses in @code, @what. */
static bool over_limit(Scan *s, const CheckProc *p, const char **code, char *what, size_t size) {
        const ProcessLimitConf *c = s->c;
        uint64_t ticks = p->utime + p->stime, rss = p->rss * (uint64_t) s->page;
        char a[32], b[32];

        if (c->max_cpu_percent > 0) {
                uint64_t life = s->uptime > p->starttime ? s->uptime - p->starttime : 0;
                uint64_t pct = life > 0 ? ticks * 100 / life : 0;

                if (pct >= (uint64_t) c->max_cpu_percent) {
                        *code = "process_limit-cpu";
                        snprintf(what, size, "%" PRIu64 "%% CPU over its life (limit %" PRId64 "%%)", pct,
                                 c->max_cpu_percent);
                        return true;
                }
        }
        if (c->max_memory > 0 && p->vsize >= c->max_memory) {
                *code = "process_limit-memory";
                snprintf(what, size, "%s of memory, RAM and swap (limit %s)", check_format_size(p->vsize, a),
                         check_format_size(c->max_memory, b));
                return true;
        }
        if (c->max_physmem > 0 && rss >= c->max_physmem) {
                *code = "process_limit-physmem";
                snprintf(what, size, "%s of RAM (limit %s)", check_format_size(rss, a),
                         check_format_size(c->max_physmem, b));
                return true;
        }
        if (c->max_physmem_percent > 0 && s->mem_total > 0 &&
            rss / 1024 * 100 / (s->mem_total / 1024) >= (uint64_t) c->max_physmem_percent) {
                *code = "process_limit-physmem";
                snprintf(what, size, "%" PRIu64 "%% of RAM, %s (limit %" PRId64 "%%)",
                         rss / 1024 * 100 / (s->mem_total / 1024), check_format_size(rss, a),
                         c->max_physmem_percent);
                return true;
        }
        if (c->max_time_usec > 0 && ticks / (uint64_t) s->hz >= c->max_time_usec / SUNKD_USEC_PER_SEC) {
                uint64_t t = ticks / (uint64_t) s->hz, l = c->max_time_usec / SUNKD_USEC_PER_SEC;

                *code = "process_limit-time";
                snprintf(what, size, "%" PRIu64 ":%02u of CPU time (limit %" PRIu64 ":%02u)", t / 60,
                         (unsigned) (t % 60), l / 60, (unsigned) (l % 60));
                return true;
        }
        return false;
}

static int look(const char *pid, void *userdata) {
        Scan *s = userdata;
        const ProcessLimitConf *c = s->c;
        char args[ARGS_MAX], what[128];
        const char *code = NULL;
        CheckProc p;
        int r;

        r = check_proc_read(s->env, pid, &p);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return 0; /* gone since readdir(), or a stat that says nothing */
        if (!c->all_users && p.euid <= s->max_sys_uid)
                return 0;
        if (c->user && p.euid != c->uid)
                return 0;
        if (c->compiled) {
                r = check_proc_cmdline(s->env, &p, !c->full_match, args, sizeof(args));
                if (r == -ENOMEM)
                        return r;
                if (r < 0 || regexec(&c->re, args, 0, NULL, 0) != 0)
                        return 0;
        }
        s->looked++;
        if (!over_limit(s, &p, &code, what, sizeof(what)))
                return 0;
        if (s->over++ == 0 || p.pid < s->worst.pid) {
                s->worst = p;
                s->code = code;
                snprintf(s->what, sizeof(s->what), "%s", what);
        }
        return 0;
}

/* MemTotal of <root>/proc/meminfo in bytes. */
static int mem_total(const HealthEnv *env, uint64_t *ret, HealthResult *res) {
        _cleanup_free_ char *text = NULL;
        const char *l;
        int r;

        r = check_read(env, "process_limit", "/proc/meminfo", MEMINFO_MAX, &text, NULL, res);
        if (r < 0 || !text)
                return r < 0 ? r : 0;
        l = strstr(text, "MemTotal:");
        if (!l || (l != text && l[-1] != '\n'))
                return check_input_bad(res, "process_limit", "/proc/meminfo has no MemTotal");
        l += strlen("MemTotal:");
        l += strspn(l, " \t");
        if (strspn(l, "0123456789") == 0 || strspn(l, "0123456789") > 15 || strtoull(l, NULL, 10) == 0)
                return check_input_bad(res, "process_limit", "/proc/meminfo's MemTotal is not a size");
        *ret = strtoull(l, NULL, 10) * 1024;
        return 1;
}

static int process_limit_run(const void *conf, const HealthEnv *env, HealthResult *ret) {
        const ProcessLimitConf *c = conf;
        Scan s = { .c = c, .env = env, .hz = sysconf(_SC_CLK_TCK), .page = sysconf(_SC_PAGESIZE) };
        char who[80] = "", more[48] = "";
        int r;

        if (s.hz <= 0 || s.page <= 0)
                return check_input_bad(ret, "process_limit", "no clock tick or page size");
        s.max_sys_uid = c->max_system_uid >= 0 ? (uid_t) c->max_system_uid : check_proc_max_system_uid(env);
        if (c->max_cpu_percent > 0) {
                r = check_proc_uptime(env, &s.uptime);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        return r == -ENOENT ? check_input_error(ret, "process_limit", "/proc/uptime", r)
                                            : check_input_bad(ret, "process_limit",
                                                              "/proc/uptime is not an uptime");
        }
        if (c->max_physmem_percent > 0) {
                r = mem_total(env, &s.mem_total, ret);
                if (r <= 0)
                        return r;
        }
        r = check_proc_scan(env, "process_limit", look, &s, ret);
        if (r <= 0)
                return r;
        if (c->user)
                snprintf(who, sizeof(who), " of uid %u", (unsigned) c->uid);
        if (s.over == 0) {
                health_result_set(ret, HEALTH_PASS, "ok", "no process%s over its limit (%u looked at)", who,
                                  s.looked);
                return 0;
        }
        if (s.over > 1)
                snprintf(more, sizeof(more), "; %u processes over a limit", s.over);
        health_result_set(ret, HEALTH_FAIL, s.code, "process '%s' (pid %u) of uid %u using %s%s",
                          s.worst.comm, s.worst.pid, (unsigned) s.worst.euid, s.what, more);
        return 0;
}

const HealthCheckType health_check_process_limit = {
        .name = "process_limit",
        .keys = process_limit_keys,
        .n_keys = ELEMENTSOF(process_limit_keys),
        .conf_size = sizeof(ProcessLimitConf),
        .defaults = process_limit_defaults,
        .validate = process_limit_validate,
        .release = process_limit_release,
        .run = process_limit_run,
        /* /proc/<pid>/cmdline (for `match`) takes the process's mmap lock,
         * which a process stuck in the kernel may hold for ever (ps hangs
         * there): a child is killed at the timeout, a worker never is */
        .child = true,
};
