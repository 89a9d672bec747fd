/* The baseline of the file system checks (`sunkctl health genconf`): the
 * node's real, persistent file systems as <root>/proc/self/mountinfo lists
 * them, a `mount` check each (read-only where found so), and for each the
 * `disk_free` and `inodes_free` limits NHC's nhc-genconf would set.  Left
 * out: pseudo and virtual file systems (proc, sysfs, cgroup, tmpfs ...),
 * container overlays and images, whatever is mounted under /proc, /sys,
 * /dev or a container runtime's or kubelet's directories (they come and go
 * with pods), and a mount on anything but a directory (a container's
 * /etc/hosts).  Where several mounts sit on one path the last listed is
 * taken, as a process sees the one on top. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include "util/cleanup.h"
#include "util/macro.h"

#include "check-genconf.h"
#include "check-mountinfo.h"
#include "check-util.h"

#define FSTYPE_MAX CHECK_MOUNTINFO_FSTYPE_MAX
#define MOUNTS_MAX 4096
/* A node string quoted: every byte of a path as \xNN at worst. */
#define QUOTED_MAX (CHECK_PATH_MAX * 4 + 3)

/* File system types that hold no data of the node's own; "x*": a prefix. */
static const char *const virtual_types[] = {
        "proc",          "sysfs",      "devtmpfs",  "devpts",      "tmpfs",    "ramfs",      "securityfs",
        "debugfs",       "tracefs",    "pstore",    "bpf",         "configfs", "mqueue",     "hugetlbfs",
        "fusectl",       "efivarfs",   "selinuxfs", "binfmt_misc", "autofs",   "rpc_pipefs", "nfsd",
        "nsfs",          "cgroup*",    "overlay",   "aufs",        "squashfs", "fuse.lxcfs", "fuse.portal",
        "fuse.snapfuse", "fuse.gvfs*", NULL,
};

/* Where a container runtime, kubelet or the kernel mounts what comes and goes. */
static const char *const transient_dirs[] = {
        "/proc",
        "/sys",
        "/dev",
        "/run/user",
        "/run/netns",
        "/var/lib/kubelet",
        "/var/lib/docker",
        "/var/lib/containerd",
        "/run/containerd",
        "/var/lib/containers",
        "/run/containers",
        "/run/k3s",
        "/var/lib/rancher",
        "/snap",
        NULL,
};

typedef struct GenMount {
        char *path; /* unescaped */
        char fs_type[FSTYPE_MAX];
        bool ro;   /* the mount's or its super block's */
        bool keep; /* persistent, on a directory: in the baseline */
        unsigned line;
} GenMount;

typedef struct GenMounts {
        GenMount *v;
        size_t n;
} GenMounts;

static void mounts_clear(GenMounts *m) {
        for (size_t i = 0; i < m->n; i++)
                free(m->v[i].path);
        free(m->v);
        *m = (GenMounts){};
}

static bool type_is_virtual(const char *type) {
        for (const char *const *t = virtual_types; *t; t++) {
                size_t n = strlen(*t);

                if ((*t)[n - 1] == '*' ? strncmp(type, *t, n - 1) == 0 : streq(type, *t))
                        return true;
        }
        return false;
}

static bool path_is_transient(const char *path) {
        for (const char *const *d = transient_dirs; *d; d++) {
                size_t n = strlen(*d);

                if (strncmp(path, *d, n) == 0 && (path[n] == '/' || path[n] == 0))
                        return true;
        }
        return false;
}

/* The mount point, type and read-only-ness of a line, read as the mount
 * check reads it: false for a line it would not see. */
static bool parse_line(char *line, size_t len, GenMount *ret) {
        CheckMountinfoLine m;

        if (!check_mountinfo_parse(line, len, &m))
                return false;
        ret->path = m.path;
        strcpy(ret->fs_type, m.fs_type);
        ret->ro = check_mountinfo_has_option(m.opts, "ro") || check_mountinfo_has_option(m.sb_opts, "ro");
        return true;
}

/* Whether <root>@path is a directory (a mount on a file is a container's). */
static bool is_dir(const HealthEnv *env, const char *path) {
        char p[CHECK_PATH_MAX];
        struct stat st;

        return check_path(p, env, path) >= 0 && stat(p, &st) >= 0 && S_ISDIR(st.st_mode);
}

static int mounts_keep(GenMounts *m, const GenMount *e) {
        GenMount *v;

        for (size_t i = 0; i < m->n; i++)
                if (streq(m->v[i].path, e->path)) { /* the one on top */
                        strcpy(m->v[i].fs_type, e->fs_type);
                        m->v[i].ro = e->ro;
                        m->v[i].keep = e->keep;
                        m->v[i].line = e->line;
                        return 0;
                }
        if (m->n >= MOUNTS_MAX)
                return 0;
        v = reallocarray(m->v, m->n + 1, sizeof(*v));
        if (!v)
                return -ENOMEM;
        m->v = v;
        v[m->n] = *e;
        v[m->n].path = strdup(e->path);
        if (!v[m->n].path)
                return -ENOMEM;
        m->n++;
        return 0;
}

/* The persistent mounts of <root>, in mountinfo's order.  -errno when the
 * table cannot be read. */
static int mounts_read(const HealthEnv *env, GenMounts *ret) {
        CheckLines l = CHECK_LINES_INIT;
        char file[CHECK_PATH_MAX], *line;
        unsigned n = 0;
        size_t len;
        int r;

        r = check_path(file, env, "/proc/self/mountinfo");
        if (r >= 0)
                r = check_lines_open(&l, file);
        while (r >= 0 && (r = check_lines_next(&l, &line, &len)) > 0) {
                GenMount e = { .line = ++n };

                if (!parse_line(line, len, &e) || path_is_transient(e.path))
                        continue;
                /* kept even when virtual: the top of a stack decides, and a
                 * tmpfs over a disk hides the disk */
                e.keep = !type_is_virtual(e.fs_type);
                r = mounts_keep(ret, &e);
        }
        check_lines_close(&l);
        for (size_t i = 0; r >= 0 && i < ret->n; i++)
                ret->v[i].keep = ret->v[i].keep && is_dir(env, ret->v[i].path);
        if (r < 0)
                mounts_clear(ret);
        return r;
}

/* @m's path quoted, or NULL with a note that it is left out. */
static const char *quoted_path(HealthGenconf *out, const char *type, const GenMount *m, char *buf) {
        const char *q = health_genconf_quote(m->path, buf, QUOTED_MAX);

        if (!q)
                (void) health_genconf_note(
                        out,
                        "%s: the mount point of line %u of mountinfo left out: not UTF-8, "
                        "which YAML cannot hold",
                        type, m->line);
        return q;
}

/* The entry of one kept mount, its path quoted as @path. */
typedef int (*mount_entry_fn)(const HealthEnv *env, HealthGenconf *out, const GenMount *m, const char *path);

/* @fn for each kept mount whose path YAML can hold. */
static int each_mount(const HealthEnv *env, HealthGenconf *out, const char *type, mount_entry_fn fn) {
        _cleanup_free_ char *path = malloc(QUOTED_MAX);
        GenMounts m = {};
        int r;

        if (!path)
                return -ENOMEM;
        r = mounts_read(env, &m);
        for (size_t i = 0; r >= 0 && i < m.n; i++)
                if (m.v[i].keep && quoted_path(out, type, &m.v[i], path))
                        r = fn(env, out, &m.v[i], path);
        mounts_clear(&m);
        return r;
}

int check_genconf_fs_mount(const HealthEnv *env, HealthGenconf *out) {
        _cleanup_free_ char *path = malloc(QUOTED_MAX), *type = malloc(QUOTED_MAX);
        GenMounts m = {};
        int r;

        if (!path || !type)
                return -ENOMEM;
        r = mounts_read(env, &m);
        for (size_t i = 0; r >= 0 && i < m.n; i++) {
                char name[HEALTH_GENCONF_NAME_MAX + 1];
                bool plain_type = !strpbrk(m.v[i].fs_type, " \t\n\\");

                if (!m.v[i].keep || !quoted_path(out, "mount", &m.v[i], path))
                        continue;
                plain_type = plain_type && health_genconf_quote(m.v[i].fs_type, type, QUOTED_MAX);
                if (!plain_type)
                        (void) health_genconf_note(out,
                                                   "mount: line %u of mountinfo: a file system type that "
                                                   "does not read as one left out of its check",
                                                   m.v[i].line);
                r = health_genconf_add(out, "{name: %s, type: mount, path: %s%s%s%s}",
                                       health_genconf_name(out, "mount", m.v[i].path, name), path,
                                       plain_type ? ", fs_type: " : "", plain_type ? type : "",
                                       m.v[i].ro ? ", rw: false" : "");
        }
        mounts_clear(&m);
        return r;
}

/* NHC's limit of use for a file system of @size bytes: 90% up to 1 GiB,
 * 95% up to 1 TiB, 99% beyond (never below what is used now). */
static unsigned nhc_used_limit(unsigned __int128 size) {
        return size <= (UINT64_C(1) << 30) ? 90 : size <= (UINT64_C(1) << 40) ? 95 : 99;
}

/* df's Use%: rounded up. */
static unsigned used_pct(unsigned __int128 avail, unsigned __int128 total) {
        return (unsigned) (100 - avail * 100 / total);
}

#define BOOT_MIN_FREE (UINT64_C(40) << 20)

static int disk_free_one(const HealthEnv *env, HealthGenconf *out, const GenMount *m, const char *path) {
        char name[HEALTH_GENCONF_NAME_MAX + 1];
        struct statvfs st;
        HealthResult ignored;
        unsigned __int128 avail, total;
        unsigned limit;

        if (check_statvfs(env, "disk_free", m->path, &st, &ignored) <= 0 || st.f_blocks == 0)
                return 0;
        avail = (unsigned __int128) st.f_bavail * st.f_frsize;
        total = ((unsigned __int128) st.f_blocks - MIN(st.f_bfree, st.f_blocks) + st.f_bavail) * st.f_frsize;
        if (total == 0)
                return 0;
        if (streq(m->path, "/boot")) {
                if (avail >= BOOT_MIN_FREE)
                        return health_genconf_add(
                                out, "{name: %s, type: disk_free, path: %s, min_free: 40M}",
                                health_genconf_name(out, "disk_free", m->path, name), path);
                return health_genconf_note(out, "disk_free: /boot has less than 40M free: no limit set");
        }
        limit = MAX(nhc_used_limit((unsigned __int128) st.f_blocks * st.f_frsize), used_pct(avail, total));
        if (limit >= 100)
                return health_genconf_note(out,
                                           "disk_free: the file system of line %u of mountinfo is full: "
                                           "no limit set",
                                           m->line);
        return health_genconf_add(out, "{name: %s, type: disk_free, path: %s, min_free_pct: %u}",
                                  health_genconf_name(out, "disk_free", m->path, name), path, 100 - limit);
}

int check_genconf_fs_disk_free(const HealthEnv *env, HealthGenconf *out) {
        return each_mount(env, out, "disk_free", disk_free_one);
}

/* NHC's: a file system of fewer inodes than this is not checked ... */
#define INODES_FEW 10000
/* ... and one of this many or more may use 98% of them, the rest all but 1%. */
#define INODES_MANY 50000000

static int inodes_free_one(const HealthEnv *env, HealthGenconf *out, const GenMount *m, const char *path) {
        char name[HEALTH_GENCONF_NAME_MAX + 1];
        struct statvfs st;
        HealthResult ignored;
        unsigned __int128 total;
        unsigned pct;

        /* btrfs and some network file systems report no inodes */
        if (check_statvfs(env, "inodes_free", m->path, &st, &ignored) <= 0 || st.f_files < INODES_FEW)
                return 0;
        total = (unsigned __int128) st.f_files - MIN(st.f_ffree, st.f_files) + st.f_favail;
        pct = st.f_files >= INODES_MANY ? 2 : 1;
        if ((unsigned __int128) st.f_favail * 100 < (unsigned __int128) pct * total)
                pct = 1;
        if ((unsigned __int128) st.f_favail * 100 < (unsigned __int128) pct * total)
                return health_genconf_note(out,
                                           "inodes_free: the file system of line %u of mountinfo has "
                                           "less than 1%% of its inodes free: no limit set",
                                           m->line);
        return health_genconf_add(out, "{name: %s, type: inodes_free, path: %s, min_free_pct: %u}",
                                  health_genconf_name(out, "inodes_free", m->path, name), path, pct);
}

int check_genconf_fs_inodes_free(const HealthEnv *env, HealthGenconf *out) {
        return each_mount(env, out, "inodes_free", inodes_free_one);
}
