/* The `mount` check: a path is a mount point, of the file system type
 * asked for, and writable, as <root>/proc/self/mountinfo says.  Where
 * several mounts sit on one path, the one on top (no other mount there has
 * it as its parent) is the one a process sees.  Read-only counts from both
 * the mount's own flags and its super block's (ext4's errors=remount-ro
 * turns the latter).  Nothing is created or mounted: NHC makes a missing
 * mount point, this check only reports it.
 *
 * `rw` (default true) asks that it be writable, NHC's check_fs_mount_rw;
 * `rw: false` takes either.  `ro: true` asks that it be read-only, by
 * either flag (what "ro" in /proc/mounts, which NHC's check_fs_mount_ro
 * matches, means); it implies `rw: false`, and is refused beside an
 * explicit `rw: true`. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/macro.h"

#include "check-genconf.h"
#include "check-mountinfo.h"
#include "check-util.h"

typedef struct MountConf {
        HealthCheckCommon common;
        char *path;
        char *fs_type;
        /* rw_given: 2 until the key table writes rw (a bool, 0 or 1)
         * through it, so validate knows whether rw was given */
        union {
                bool rw;
                uint8_t rw_given;
        };
        bool ro;
} MountConf;

static const sunkd_cfg_key mount_keys[] = {
        HEALTH_COMMON_KEYS,
        { "path", SUNKD_CFG_PATH, offsetof(MountConf, path), SUNKD_CFG_REQUIRED, 0, 0 },
        { "fs_type", SUNKD_CFG_STRING, offsetof(MountConf, fs_type), 0, 0, 0 },
        { "rw", SUNKD_CFG_BOOL, offsetof(MountConf, rw), 0, 0, 0 },
        { "ro", SUNKD_CFG_BOOL, offsetof(MountConf, ro), 0, 0, 0 },
};

#define FSTYPE_MAX CHECK_MOUNTINFO_FSTYPE_MAX
/* Mounts stacked on one path that are told apart; past that (a hostile
 * table), the last ones listed. */
#define STACK_MAX 16

typedef struct MountEntry {
        unsigned long id, parent;
        char fs_type[FSTYPE_MAX];
        bool ro, sb_ro;
} MountEntry;

typedef struct MountScan {
        MountEntry stack[STACK_MAX];
        size_t n; /* entries at the path, the last STACK_MAX kept */
        unsigned valid, malformed;
} MountScan;

static void mount_defaults(void *conf) {
        ((MountConf *) conf)->rw_given = 2;
}

static int mount_validate(void *conf, char **ret_error) {
        MountConf *c = conf;
        bool rw_explicit = c->rw_given != 2;

        if (c->ro && rw_explicit && c->rw_given == 1)
                return check_invalid(ret_error, "ro",
                                     "a mount is not both read-only (ro: true) and writable (rw: true)");
        c->rw = rw_explicit ? c->rw_given == 1 : !c->ro;
        check_path_normalise(c->path);
        if (c->fs_type &&
            (isempty(c->fs_type) || strlen(c->fs_type) >= FSTYPE_MAX || strpbrk(c->fs_type, " \t\n\\")))
                return check_invalid(ret_error, "fs_type",
                                     "'%s' is not a file system type as mountinfo names one", c->fs_type);
        return 0;
}

/* A line of the table; false for one that does not read as mountinfo's. */
static bool parse_line(char *line, size_t len, const char *path, MountScan *s) {
        CheckMountinfoLine m;
        MountEntry e = {};

        if (!check_mountinfo_parse(line, len, &m))
                return false;
        s->valid++;
        if (!streq(m.path, path))
                return true;
        e.id = m.id;
        e.parent = m.parent;
        strcpy(e.fs_type, m.fs_type);
        e.ro = check_mountinfo_has_option(m.opts, "ro");
        e.sb_ro = check_mountinfo_has_option(m.sb_opts, "ro");
        if (s->n >= STACK_MAX)
                memmove(s->stack, s->stack + 1, sizeof(s->stack) - sizeof(s->stack[0]));
        s->stack[MIN(s->n, (size_t) STACK_MAX - 1)] = e;
        s->n++;
        return true;
}

/* The mount on top: the last listed that no other mount at the path sits on. */
static const MountEntry *top_of(const MountScan *s) {
        size_t n = MIN(s->n, (size_t) STACK_MAX);

        for (size_t i = n; i > 0; i--) {
                bool below = false;

                for (size_t j = 0; j < n && !below; j++)
                        below = j != i - 1 && s->stack[j].parent == s->stack[i - 1].id;
                if (!below)
                        return &s->stack[i - 1];
        }
        return n > 0 ? &s->stack[n - 1] : NULL;
}

static int scan(const char *file, const char *path, MountScan *s, HealthResult *ret) {
        CheckLines l = CHECK_LINES_INIT;
        char *line;
        size_t len;
        int r;

        r = check_lines_open(&l, file);
        while (r >= 0 && (r = check_lines_next(&l, &line, &len)) > 0)
                if (!parse_line(line, len, path, s))
                        s->malformed++;
        s->malformed += l.overlong;
        check_lines_close(&l);
        if (r == -ENOMEM)
                health_result_set(ret, HEALTH_UNKNOWN, "out-of-memory", "out of memory reading '%s'", file);
        else if (r < 0)
                check_input_error(ret, "mount", file, r);
        return r;
}

static void judge(const MountConf *c, const MountScan *s, const char *file, HealthResult *ret) {
        const MountEntry *top = top_of(s);

        if (!top && s->valid == 0)
                check_input_bad(ret, "mount", "'%s' holds no mount entries (%u malformed lines)", file,
                                s->malformed);
        else if (!top && s->malformed > 0)
                health_result_set(ret, HEALTH_FAIL, "mount-missing",
                                  "'%s' is not mounted (%u malformed lines of '%s' skipped)", c->path,
                                  s->malformed, file);
        else if (!top)
                health_result_set(ret, HEALTH_FAIL, "mount-missing", "'%s' is not mounted", c->path);
        else if (c->fs_type && !streq(top->fs_type, c->fs_type))
                health_result_set(ret, HEALTH_FAIL, "mount-fstype", "'%s' is %s, not %s", c->path,
                                  top->fs_type, c->fs_type);
        else if (c->ro && !top->ro && !top->sb_ro)
                health_result_set(ret, HEALTH_FAIL, "mount-writable",
                                  "'%s' (%s) is writable, want read-only", c->path, top->fs_type);
        else if (c->rw && (top->ro || top->sb_ro))
                health_result_set(
                        ret, HEALTH_FAIL, "mount-readonly", "'%s' (%s) is %s", c->path, top->fs_type,
                        top->ro ? "mounted read-only" : "read-only: its file system went read-only");
        else
                health_result_set(ret, HEALTH_PASS, "ok", "'%s' is mounted (%s, %s)", c->path, top->fs_type,
                                  top->ro || top->sb_ro ? "ro" : "rw");
}

static int mount_run(const void *conf, const HealthEnv *env, HealthResult *ret) {
        const MountConf *c = conf;
        MountScan *s;
        char file[CHECK_PATH_MAX];
        int r;

        r = check_path(file, env, "/proc/self/mountinfo");
        if (r < 0)
                return check_input_error(ret, "mount", "/proc/self/mountinfo", r);
        s = calloc(1, sizeof(*s));
        if (!s) {
                health_result_set(ret, HEALTH_UNKNOWN, "out-of-memory", "out of memory");
                return -ENOMEM;
        }
        r = scan(file, c->path, s, ret);
        if (r >= 0)
                judge(c, s, file, ret);
        free(s);
        return r == -ENOMEM ? r : 0;
}

const HealthCheckType health_check_mount = {
        .name = "mount",
        .keys = mount_keys,
        .n_keys = ELEMENTSOF(mount_keys),
        .conf_size = sizeof(MountConf),
        .defaults = mount_defaults,
        .validate = mount_validate,
        .run = mount_run,
        .genconf = check_genconf_fs_mount,
        .child = true,
};
