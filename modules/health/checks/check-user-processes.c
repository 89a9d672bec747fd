/* The `user_processes` check, NHC's check_ps_unauth_users and (with
 * `lineage: true`) check_ps_userproc_lineage: a process of a user who has
 * no job on the node fails it, or with lineage, any user process not
 * started by a job at all.  Processes of system users (uid at most
 * max_system_uid, by default NHC's: login.defs's SYS_UID_MAX, else
 * UID_MIN - 1, else 99), of allowed_users (NHC's NHC_AUTH_USERS, "root
 * nobody" unless given) and named in ignore_processes (NHC's -c) are
 * allowed.  NHC may kill what it finds; sunkd only reports it.
 *
 * Where the jobs come from: NHC asks slurmctld (squeue -w <node>).  sunkd
 * asks the node itself, through /proc: every job step on a node is run by a
 * slurmstepd that slurmd started as root, and a job's processes descend
 * from it, so the users with a job are the owners of the processes below a
 * root slurmstepd, and NHC's lineage rule is "below a root slurmstepd" (its
 * RM_DAEMON_MATCH for Slurm).  This reads the same on Slurm 22.05 and
 * 24.11, with any ProctrackType (proctrack/linuxproc keeps no cgroup
 * tree), cgroup v1 or v2, and under a fake root in the tests; it needs
 * neither `scontrol listpids` (a fork of a client per round, and
 * slurmctld's view rather than the node's) nor slurmd's spool sockets
 * (slurmstepd's private protocol, which changes between releases).  A
 * slurmstepd must be root's to count: any user can name a process
 * "slurmstepd", no user can make one run as root.  What this cannot see is
 * a job whose every process has left its step's tree (daemonized and
 * reparented to init): its user counts as having no job, which is what the
 * lineage rule calls rogue anyway. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/cleanup.h"
#include "util/macro.h"
#include "util/strv.h"

#include "check-proc.h"

#define STEPD_COMM "slurmstepd"

typedef struct UserProcessesConf {
        HealthCheckCommon common;
        char **allowed_users;
        char **ignore_processes;
        bool lineage;
        int64_t max_system_uid; /* -1: NHC's, from login.defs at each run */
        /* from validate */
        uid_t *allowed;
        size_t n_allowed;
} UserProcessesConf;

static const sunkd_cfg_key user_processes_keys[] = {
        HEALTH_COMMON_KEYS,
        { "allowed_users", SUNKD_CFG_LIST, offsetof(UserProcessesConf, allowed_users), 0, 0, 0 },
        { "ignore_processes", SUNKD_CFG_LIST, offsetof(UserProcessesConf, ignore_processes), 0, 0, 0 },
        { "lineage", SUNKD_CFG_BOOL, offsetof(UserProcessesConf, lineage), 0, 0, 0 },
        { "max_system_uid", SUNKD_CFG_INT, offsetof(UserProcessesConf, max_system_uid), 0, 0,
          UINT32_MAX - 1 },
};

static void user_processes_defaults(void *conf) {
        ((UserProcessesConf *) conf)->max_system_uid = -1;
}

static int user_processes_validate(void *conf, char **ret_error) {
        static const char *const nhc_auth_users[] = { "root", "nobody", NULL };
        UserProcessesConf *c = conf;
        const char *const *users =
                c->allowed_users ? (const char *const *) c->allowed_users : nhc_auth_users;
        size_t n = 0;
        int r;

        while (users[n])
                n++;
        c->allowed = calloc(MAX(n, 1u), sizeof(uid_t));
        if (!c->allowed)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *why = NULL;

                r = check_proc_resolve_user("allowed_users", users[i], &c->allowed[c->n_allowed], &why);
                if (r == -ENOMEM)
                        return r;
                if (r < 0 && !c->allowed_users)
                        continue; /* NHC's default names a user this node may not have */
                if (r < 0) {
                        *ret_error = TAKE_PTR(why);
                        return r;
                }
                c->n_allowed++;
        }
        for (char **p = c->ignore_processes; p && *p; p++)
                if (isempty(*p) || strlen(*p) > CHECK_PROC_COMM_MAX || strchr(*p, '/') || strchr(*p, '\n'))
                        return check_invalid(ret_error, "ignore_processes",
                                             "'%s' is not a process name: the kernel keeps 1 to %d bytes of "
                                             "it, no '/'",
                                             *p, CHECK_PROC_COMM_MAX);
        return 0;
}

static void user_processes_release(void *conf) {
        UserProcessesConf *c = conf;

        c->allowed = mfree(c->allowed);
        c->n_allowed = 0;
}

typedef struct Proc {
        uint32_t pid, ppid;
        uid_t euid;
        uint8_t job; /* 0 unknown, 1 below a root slurmstepd, 2 not */
        char comm[sizeof(((CheckProc *) NULL)->comm)];
} Proc;

typedef struct Table {
        const HealthEnv *env;
        Proc *procs;
        size_t n, cap;
} Table;

static int collect(const char *pid, void *userdata) {
        Table *t = userdata;
        CheckProc p;
        int r;

        r = check_proc_read(t->env, pid, &p);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return 0; /* gone since readdir(), or a stat that says nothing */
        if (t->n == t->cap) {
                size_t cap = t->cap ? t->cap * 2 : 256;
                Proc *q = reallocarray(t->procs, cap, sizeof(*q));

                if (!q)
                        return -ENOMEM;
                t->procs = q;
                t->cap = cap;
        }
        t->procs[t->n] = (Proc){ .pid = p.pid, .ppid = p.ppid, .euid = p.euid };
        memcpy(t->procs[t->n].comm, p.comm, sizeof(p.comm));
        t->n++;
        return 0;
}

static int pid_cmp(const void *a, const void *b) {
        const Proc *x = a, *y = b;

        return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static Proc *find(Table *t, uint32_t pid) {
        Proc key = { .pid = pid };

        return pid == 0 ? NULL : bsearch(&key, t->procs, t->n, sizeof(Proc), pid_cmp);
}

static bool is_stepd(const Proc *p) {
        return p->euid == 0 && streq(p->comm, STEPD_COMM);
}

/* Whether @p descends from a root slurmstepd; the answer is kept on each
 * process walked.  A parent missing (gone mid-scan, or outside a pid
 * namespace) ends the walk: not in a job.  A loop (a hostile fake /proc)
 * ends it after as many steps as there are processes. */
static Proc *parent_of(Table *t, const Proc *p) {
        return p->ppid != p->pid ? find(t, p->ppid) : NULL;
}

static bool in_job(Table *t, Proc *p) {
        uint8_t answer = 2;
        Proc *q = p, *stop = NULL;

        for (size_t steps = 0; q && steps <= t->n; steps++) {
                Proc *parent;

                if (q->job != 0) {
                        answer = q->job;
                        stop = q;
                        break;
                }
                parent = parent_of(t, q);
                if (parent && is_stepd(parent)) {
                        answer = 1;
                        stop = parent;
                        break;
                }
                q = parent;
        }
        /* the walk again, up to where it ended, each marked */
        for (Proc *m = p; m && m != stop && m->job == 0; m = parent_of(t, m))
                m->job = answer;
        return answer == 1;
}

static bool uid_in(const uid_t *uids, size_t n, uid_t uid) {
        for (size_t i = 0; i < n; i++)
                if (uids[i] == uid)
                        return true;
        return false;
}

static int user_processes_run(const void *conf, const HealthEnv *env, HealthResult *ret) {
        const UserProcessesConf *c = conf;
        _cleanup_free_ uid_t *job_uids = NULL;
        Table t = { .env = env };
        size_t n_job_uids = 0, n_job_procs = 0;
        unsigned rogue = 0;
        uid_t max_sys;
        Proc *first = NULL;
        int r;

        max_sys = c->max_system_uid >= 0 ? (uid_t) c->max_system_uid : check_proc_max_system_uid(env);
        r = check_proc_scan(env, "user_processes", collect, &t, ret);
        if (r <= 0)
                goto out;
        if (t.n > 0)
                qsort(t.procs, t.n, sizeof(Proc), pid_cmp);
        job_uids = calloc(MAX(t.n, 1u), sizeof(uid_t));
        if (!job_uids) {
                r = -ENOMEM;
                goto out;
        }
        for (size_t i = 0; i < t.n; i++)
                if (!is_stepd(&t.procs[i]) && in_job(&t, &t.procs[i])) {
                        n_job_procs++;
                        if (!uid_in(job_uids, n_job_uids, t.procs[i].euid))
                                job_uids[n_job_uids++] = t.procs[i].euid;
                }
        for (size_t i = 0; i < t.n; i++) {
                Proc *p = &t.procs[i];

                if (p->euid <= max_sys || uid_in(c->allowed, c->n_allowed, p->euid) ||
                    strv_contains(c->ignore_processes, p->comm))
                        continue;
                if (c->lineage ? in_job(&t, p) : uid_in(job_uids, n_job_uids, p->euid))
                        continue;
                if (rogue++ == 0)
                        first = p; /* the lowest pid: the table is sorted */
        }
        if (rogue == 0)
                health_result_set(
                        ret, HEALTH_PASS, "ok",
                        "no process of a user without a job (%zu of jobs, of %zu users; %zu processes)",
                        n_job_procs, n_job_uids, t.n);
        else
                health_result_set(ret, HEALTH_FAIL, "user_processes-unauthorized",
                                  "process '%s' (pid %u) of uid %u %s%s%u in all", first->comm, first->pid,
                                  (unsigned) first->euid,
                                  c->lineage ? "was not started by a job"
                                             : "whose user has no job on the node",
                                  "; ", rogue);
        r = 0;
out:
        free(t.procs);
        return r;
}

const HealthCheckType health_check_user_processes = {
        .name = "user_processes",
        .keys = user_processes_keys,
        .n_keys = ELEMENTSOF(user_processes_keys),
        .conf_size = sizeof(UserProcessesConf),
        .defaults = user_processes_defaults,
        .validate = user_processes_validate,
        .release = user_processes_release,
        .run = user_processes_run,
        .child = false,
};
