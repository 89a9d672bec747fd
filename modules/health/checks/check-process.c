/* The `process` check: a process whose name (the kernel's comm, at most 15
 * bytes) is `process` runs, of `user` when one is given, not a zombie.  The
 * user is resolved to a uid when the config is read: `run` may be in a child
 * forked from the threaded daemon, where NSS (and its locks) is no place to
 * be.  A user unknown then must be given by uid.  The owner compared is the
 * effective uid, as ps's USER column shows. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/macro.h"

#include "check-proc.h"
#include "check-util.h"

#define STATUS_MAX (64 * 1024)

typedef struct ProcessConf {
        HealthCheckCommon common;
        char *process;
        char *user;
        /* from validate */
        uid_t uid;
        bool by_user;
} ProcessConf;

static const sunkd_cfg_key process_keys[] = {
        HEALTH_COMMON_KEYS,
        { "process", SUNKD_CFG_STRING, offsetof(ProcessConf, process), SUNKD_CFG_REQUIRED, 0, 0 },
        { "user", SUNKD_CFG_STRING, offsetof(ProcessConf, user), 0, 0, 0 },
};

static int process_validate(void *conf, char **ret_error) {
        ProcessConf *c = conf;
        int r;

        if (isempty(c->process) || strlen(c->process) > CHECK_PROC_COMM_MAX)
                return check_invalid(ret_error, "process",
                                     "'%s' is not a process name: the kernel keeps 1 to %d bytes of it",
                                     c->process, CHECK_PROC_COMM_MAX);
        if (strchr(c->process, '/') || strchr(c->process, '\n'))
                return check_invalid(ret_error, "process", "'%s': a process name has no '/' or newline",
                                     c->process);
        c->by_user = c->user != NULL;
        if (c->user) {
                r = check_proc_resolve_user("user", c->user, &c->uid, ret_error);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* The value of status's "@key:\t..." line, or NULL. */
static const char *status_field(const char *text, const char *key) {
        size_t n = strlen(key);

        for (const char *l = text; *l; l += strcspn(l, "\n") + (l[strcspn(l, "\n")] ? 1 : 0))
                if (strncmp(l, key, n) == 0 && l[n] == ':')
                        return l + n + 1 + strspn(l + n + 1, " \t");
        return NULL;
}

/* The effective uid of status's "Uid:\treal\teffective\tsaved\tfs", and
 * whether the process is a zombie (or dead); -EBADMSG without them. */
static int read_status(const HealthEnv *env, const char *pid, uid_t *ret_uid, bool *ret_dead) {
        _cleanup_free_ char *text = NULL;
        char rel[64], eff[16];
        const char *uid, *state;
        size_t n;
        HealthResult ignored;

        if (snprintf(rel, sizeof(rel), "/proc/%s/status", pid) >= (int) sizeof(rel))
                return -ENOENT; /* too long a name for a pid */
        if (check_read(env, "process", rel, STATUS_MAX, &text, NULL, &ignored) < 0 || !text)
                return -ENOENT;
        uid = status_field(text, "Uid");
        state = status_field(text, "State");
        if (!uid || !state)
                return -EBADMSG;
        n = strspn(uid, "0123456789"); /* the real uid */
        if (n == 0 || (uid[n] != ' ' && uid[n] != '\t'))
                return -EBADMSG;
        uid += n + strspn(uid + n, " \t");
        n = strspn(uid, "0123456789");
        if (n == 0 || n >= sizeof(eff))
                return -EBADMSG;
        memcpy(eff, uid, n);
        eff[n] = 0;
        if (check_parse_id(eff, ret_uid) < 0)
                return -EBADMSG;
        *ret_dead = *state == 'Z' || *state == 'X';
        return 0;
}

/* Whether <root>/proc/@pid/comm is @name ("munged\n"). */
static bool comm_is(const HealthEnv *env, const char *pid, const char *name) {
        _cleanup_free_ char *comm = NULL;
        char rel[64];
        size_t len;
        HealthResult ignored;

        if (snprintf(rel, sizeof(rel), "/proc/%s/comm", pid) >= (int) sizeof(rel))
                return false;
        if (check_read(env, "process", rel, 64, &comm, &len, &ignored) < 0 || !comm)
                return false;
        if (len > 0 && comm[len - 1] == '\n')
                comm[--len] = 0;
        return strlen(comm) == len && streq(comm, name);
}

typedef struct ProcessCount {
        unsigned found, other_user, dead;
} ProcessCount;

static void count(const ProcessConf *c, const HealthEnv *env, const char *pid, ProcessCount *n) {
        uid_t uid;
        bool dead;

        if (!comm_is(env, pid, c->process))
                return;
        if (read_status(env, pid, &uid, &dead) < 0)
                return; /* gone since readdir(), or a status that says nothing */
        if (dead)
                n->dead++;
        else if (c->by_user && uid != c->uid)
                n->other_user++;
        else
                n->found++;
}

static int process_run(const void *conf, const HealthEnv *env, HealthResult *ret) {
        const ProcessConf *c = conf;
        _cleanup_closedir_ DIR *d = NULL;
        char dir[CHECK_PATH_MAX], who[96] = "";
        ProcessCount n = {};
        struct dirent *de;
        int r;

        r = check_path(dir, env, "/proc");
        if (r < 0)
                return check_input_error(ret, "process", "/proc", r);
        d = opendir(dir);
        if (!d)
                return check_input_error(ret, "process", dir, negative_errno());
        while ((errno = 0, de = readdir(d)))
                if (de->d_name[0] >= '1' && de->d_name[0] <= '9' &&
                    strspn(de->d_name, "0123456789") == strlen(de->d_name) && strlen(de->d_name) < 20)
                        count(c, env, de->d_name, &n);
        if (errno != 0)
                return check_input_error(ret, "process", dir, negative_errno());
        if (c->by_user && check_parse_id(c->user, &(uid_t){ 0 }) >= 0)
                snprintf(who, sizeof(who), " of uid %u", (unsigned) c->uid);
        else if (c->by_user)
                snprintf(who, sizeof(who), " of user '%.32s' (uid %u)", c->user, (unsigned) c->uid);
        if (n.found > 0)
                health_result_set(ret, HEALTH_PASS, "ok", "%u '%s' process%s%s running", n.found, c->process,
                                  n.found == 1 ? "" : "es", who);
        else if (n.other_user > 0)
                health_result_set(ret, HEALTH_FAIL, "process-missing",
                                  "no '%s' process%s running (%u of other users)", c->process, who,
                                  n.other_user);
        else
                health_result_set(ret, HEALTH_FAIL, "process-missing", "no '%s' process%s running%s",
                                  c->process, who, n.dead ? " (zombies only)" : "");
        return 0;
}

static int process_genconf(const HealthEnv *env, HealthGenconf *out);

const HealthCheckType health_check_process = {
        .name = "process",
        .keys = process_keys,
        .n_keys = ELEMENTSOF(process_keys),
        .conf_size = sizeof(ProcessConf),
        .validate = process_validate,
        .run = process_run,
        .genconf = process_genconf,
        .child = false,
};

/* The baseline: the node's services as nhc-genconf's check_ps_service
 * finds them (sshd), and the two a Slurm node lives by, each once when a
 * live process of it runs; `user: root` where it runs as root, as NHC's
 * "-u root" (another uid is left out: a service user's uid differs from
 * node to node, and no name can be looked up in a child). */
static const char *const genconf_services[] = { "sshd", "munged", "slurmd" };

static int process_genconf(const HealthEnv *env, HealthGenconf *out) {
        _cleanup_closedir_ DIR *d = NULL;
        char dir[CHECK_PATH_MAX];
        bool found[ELEMENTSOF(genconf_services)] = {};
        uid_t uids[ELEMENTSOF(genconf_services)] = {};
        struct dirent *de;
        int r;

        r = check_path(dir, env, "/proc");
        if (r < 0)
                return r;
        d = opendir(dir);
        if (!d)
                return -errno;
        while ((errno = 0, de = readdir(d))) {
                if (de->d_name[0] < '1' || de->d_name[0] > '9' ||
                    strspn(de->d_name, "0123456789") != strlen(de->d_name) || strlen(de->d_name) >= 20)
                        continue;
                for (size_t i = 0; i < ELEMENTSOF(genconf_services); i++) {
                        uid_t uid;
                        bool dead;

                        if (found[i] || !comm_is(env, de->d_name, genconf_services[i]))
                                continue;
                        if (read_status(env, de->d_name, &uid, &dead) >= 0 && !dead) {
                                found[i] = true;
                                uids[i] = uid;
                        }
                        break;
                }
        }
        if (errno != 0)
                return -errno;
        for (size_t i = 0; i < ELEMENTSOF(genconf_services); i++) {
                char name[HEALTH_GENCONF_NAME_MAX + 1];

                if (!found[i])
                        continue;
                r = health_genconf_add(out, "{name: %s, type: process, process: %s%s}",
                                       health_genconf_name(out, "process", genconf_services[i], name),
                                       genconf_services[i], uids[i] == 0 ? ", user: root" : "");
                if (r < 0)
                        return r;
        }
        return 0;
}
