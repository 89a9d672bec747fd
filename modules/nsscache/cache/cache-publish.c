/* Putting the rendered maps in place for libnss-cache.
 *
 * libnss-cache reads two files per lookup: an index (FILE.ixname etc.),
 * whose record gives a byte offset, and then the data file at that offset.
 * The two are opened separately, by name, without any lock, so a reader can
 * pair an index with a data file of another generation.  What it does then
 * (nss_cache.c, _nss_cache_bsearch2):
 *   - no index file: linear scan of the data, always correct;
 *   - data mtime newer than the index's: "stale", linear scan, correct;
 *   - index and data of different generations with equal mtimes: it seeks to
 *     a foreign offset, usually parses a line that is not the one asked for
 *     and falls back to the linear scan, but an offset past the end makes it
 *     return a bogus status.
 * So each map is replaced in this order: the old indexes are unlinked (every
 * reader from now on scans linearly), the data is renamed over, then the new
 * indexes are renamed in; and every staged file of a map gets one mtime,
 * later than any it replaces (stage_map() says why).
 *
 * A refresh publishes all enabled maps or none: every map and index is
 * written to a temp file beside its target, .sunkd-TARGET.XXXXXX (a
 * refresh spills each map's text there as it renders it, so memory never
 * holds a whole map; indexes are built reading the data back a chunk at a
 * time), and every guard (empty, below min_entries, shrinking by more than
 * max_shrink_pct) is checked before any target is touched; the temps of
 * changed maps are then staged (chmod/chown, mtime, fsync'ed), and only if
 * every one was staged are they renamed into place, under a journal
 * (cache-journal.c) that a crash leaves for the next start to finish.  A
 * failure before that unlinks all temps: the old files stay byte-identical.
 * Temps a killed run left behind (our own names, owned by root) are removed
 * before each publish, those of the run itself excepted.  A map whose
 * bytes, indexes and permissions are unchanged is not rewritten (its temps
 * are removed): its inode, its mtime and readers' page cache stay.
 *
 * Timestamps follow nsscache (update/updater.py): timestamp_dir holds
 * timestamp-MAP-update, rewritten on every successful run, and
 * timestamp-MAP-modify, in the form "%Y-%m-%dT%H:%M:%SZ\n", mode 0644.
 * nsscache writes -modify from the source's Last-Modified, which SCIM does
 * not have; we write it when the map's bytes changed (or it is missing).
 * Permissions follow nsscache too (resolve_perms()).
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/fileio.h"
#include "util/macro.h"
#include "util/strv.h"

#include "cache-format.h"
#include "cache-index.h"
#include "cache-journal.h"
#include "cache-publish.h"

#define MAX_INDEXES 2

#define CHUNK CACHE_FORMATTED_CHUNK /* reading and comparing, as the maps are written */

/* A file written beside its target as .sunkd-NAME.XXXXXX, renamed over it
 * if the map changed, else removed. */
typedef struct Staged {
        int fd;
        char *tmp;
        uint64_t len; /* for an index, 0: the map is empty, no index file at all */
} Staged;

typedef struct IndexWork {
        char *path;
        Staged file;
        char *name; /* an automount map's part: its file's name without the suffix */
} IndexWork;

typedef struct MapWork {
        NssMapType type;
        char *path;
        Staged file;
        size_t entries;
        IndexWork index[MAX_INDEXES];
        size_t n_index;
        IndexWork *parts; /* automount: the maps auto.master names, each a file of its own */
        size_t n_parts;
        CachePerms data_perms, index_perms;
        bool changed, had_old;
        size_t old_entries;
        time_t newest; /* the latest mtime among the map's files on disk */
} MapWork;

static void staged_done(Staged *f) {
        if (f->fd >= 0)
                (void) close(f->fd);
        f->fd = -1;
        if (f->tmp) {
                (void) unlink(f->tmp);
                f->tmp = mfree(f->tmp);
        }
}

static void map_work_init(MapWork *w) {
        *w = (MapWork){ .file.fd = -1 };
        for (size_t i = 0; i < MAX_INDEXES; i++)
                w->index[i].file.fd = -1;
}

static void map_work_done(MapWork *w) {
        staged_done(&w->file);
        free(w->path);
        for (size_t i = 0; i < w->n_index; i++) {
                staged_done(&w->index[i].file);
                free(w->index[i].path);
        }
        for (size_t i = 0; i < w->n_parts; i++) {
                staged_done(&w->parts[i].file);
                free(w->parts[i].path);
                free(w->parts[i].name);
        }
        free(w->parts);
        map_work_init(w);
}

void cache_options_init(CacheOptions *opts) {
        *opts = (CacheOptions){
                .dir = "/etc",
                .suffix = "cache",
                .max_shrink_pct = 50,
        };
        for (size_t t = 0; t < _NSS_MAP_MAX; t++) {
                opts->enabled[t] = t <= NSS_MAP_SSHKEY; /* the users' and groups' maps */
                opts->perms[t] = (CachePerms){ .mode = 0, .uid = (uid_t) -1, .gid = (gid_t) -1 };
        }
}

/* DIR/FILE[.SUFFIX] of map @t. */
static char *file_path(const CacheOptions *opts, NssMapType t, const char *file) {
        const char *suffix = opts->map_suffix[t] ?: opts->suffix;
        char *p;

        if (asprintf(&p, "%s/%s%s%s", opts->dir, file, isempty(suffix) ? "" : ".", suffix ?: "") < 0)
                return NULL;
        return p;
}

char *cache_publish_path(const CacheOptions *opts, NssMapType t) {
        return file_path(opts, t, t == NSS_MAP_AUTOMOUNT ? NSS_AUTOMOUNT_MASTER : nss_map_to_string(t));
}

char *cache_publish_automount_path(const CacheOptions *opts, const char *file) {
        return file_path(opts, NSS_MAP_AUTOMOUNT, file);
}

_printf_(2, 3) static int append_error(char **err, const char *fmt, ...) {
        _cleanup_free_ char *s = NULL;
        char *joined;
        va_list ap;
        int k;

        if (!err)
                return 0; /* the caller did not ask why */
        va_start(ap, fmt);
        k = vasprintf(&s, fmt, ap);
        va_end(ap);
        if (k < 0)
                return -ENOMEM;
        if (!*err) {
                *err = TAKE_PTR(s);
                return 0;
        }
        if (asprintf(&joined, "%s; %s", *err, s) < 0)
                return -ENOMEM;
        free(*err);
        *err = joined;
        return 0;
}

/* As nsscache (caches/caches.py, _Commit): the data file copies mode and
 * owner from /etc/MAP if that exists, else 0644 (sshkey 0444); indexes
 * likewise, else 0644.  The shadow cache is thereby 0640 root:shadow on
 * Debian.  Callers may set them explicitly instead. */
static void resolve_perms(const CacheOptions *opts, NssMapType t, CachePerms *data, CachePerms *index) {
        CachePerms p = opts->perms[t];
        _cleanup_free_ char *compat = NULL;
        struct stat st;

        *data = *index = p;
        if (p.mode != 0)
                return;

        if (asprintf(&compat, "%s/%s", opts->compat_dir ?: "/etc", nss_map_to_string(t)) >= 0 &&
            stat(compat, &st) >= 0) {
                data->mode = index->mode = st.st_mode & 07777;
                if (p.uid == (uid_t) -1) {
                        data->uid = index->uid = st.st_uid;
                        data->gid = index->gid = st.st_gid;
                }
                return;
        }
        data->mode = t == NSS_MAP_SSHKEY ? 0444 : 0644;
        index->mode = 0644;
}

/* @path's directory and name, split at the last '/'. */
static int split_path(const char *path, char **ret_dir, const char **ret_name) {
        const char *slash = strrchr(path, '/');

        if (!slash)
                return -EINVAL;
        *ret_dir = strndup(path, (size_t) (slash - path));
        if (!*ret_dir)
                return -ENOMEM;
        *ret_name = slash + 1;
        return 0;
}

/* A new temp file beside @path: DIR/.sunkd-NAME.XXXXXX, mode 0600. */
static int open_tmp(const char *path, int *ret_fd, char **ret_tmp) {
        _cleanup_free_ char *dir = NULL, *tmp = NULL;
        const char *name;
        int fd, r;

        r = split_path(path, &dir, &name);
        if (r < 0)
                return r;
        if (asprintf(&tmp, "%s/" CACHE_JOURNAL_TMP_PREFIX "%s.XXXXXX", dir, name) < 0)
                return -ENOMEM;
        fd = mkostemp(tmp, O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        *ret_fd = fd;
        *ret_tmp = TAKE_PTR(tmp);
        return 0;
}

/* Whether the next @k bytes of @old equal those of @f at @pos. */
static int same_bytes(const Staged *f, uint64_t pos, const char *old, size_t k, char *buf) {
        ssize_t got;

        if (pos + k > f->len)
                return 0;
        got = fileio_pread_full(f->fd, buf, k, pos);
        if (got < 0)
                return (int) got;
        return (size_t) got == k && memcmp(buf, old, k) == 0;
}

/* Compare the file at @path with @f (NULL or fd -1: empty), counting its
 * lines on the way.  Return: 1 identical (content and permissions), 0
 * different or absent. */
static int compare_file(const char *path, const Staged *f, const CachePerms *perms, bool *ret_exists,
                        size_t *ret_lines, time_t *ret_mtime) {
        _cleanup_close_ int fd = -1;
        _cleanup_free_ char *buf = NULL;
        uint64_t len = f && f->fd >= 0 ? f->len : 0, pos = 0;
        size_t lines = 0;
        bool same = true, last_nl = true;
        struct stat st;

        *ret_exists = false;
        if (ret_lines)
                *ret_lines = 0;

        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW | O_NONBLOCK);
        if (fd < 0)
                return errno == ENOENT ? 0 : negative_errno();
        if (fstat(fd, &st) < 0)
                return negative_errno();
        if (!S_ISREG(st.st_mode))
                return S_ISDIR(st.st_mode) ? -EISDIR : -EEXIST;
        *ret_exists = true;
        if (ret_mtime && st.st_mtime > *ret_mtime)
                *ret_mtime = st.st_mtime;

        if ((st.st_mode & 07777) != perms->mode ||
            (perms->uid != (uid_t) -1 && (st.st_uid != perms->uid || st.st_gid != perms->gid)) ||
            (uint64_t) st.st_size != len)
                same = false;
        /* Without a line count to take, a size mismatch settles it. */
        if (!same && !ret_lines)
                return 0;

        buf = malloc(2 * CHUNK);
        if (!buf)
                return -ENOMEM;
        for (;;) {
                ssize_t k = read(fd, buf, CHUNK);
                int r;

                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return negative_errno();
                }
                if (k == 0)
                        break;
                for (const char *p = buf; (p = memchr(p, '\n', (size_t) k - (size_t) (p - buf))); p++)
                        lines++;
                last_nl = buf[k - 1] == '\n';
                if (same) {
                        r = same_bytes(f, pos, buf, (size_t) k, buf + CHUNK);
                        if (r < 0)
                                return r;
                        same = r > 0;
                }
                pos += (uint64_t) k;
        }
        if (pos != len)
                same = false;
        if (ret_lines)
                *ret_lines = lines + (last_nl ? 0 : 1);
        return same;
}

int cache_publish_count_entries(const char *path, size_t *ret) {
        const CachePerms none = { .uid = (uid_t) -1 };
        bool exists;
        int r;

        r = compare_file(path, NULL, &none, &exists, ret, NULL);
        return r < 0 ? r : 0;
}

/* @f's bytes, written to a temp file beside @w->path if they are not yet
 * spilled to one, now belong to @w. */
static int take_data(MapWork *w, CacheFormatted *f) {
        int r;

        if (f->fd < 0) {
                int fd;
                char *tmp;

                r = open_tmp(w->path, &fd, &tmp);
                if (r < 0)
                        return r;
                cache_formatted_spill(f, fd, tmp);
        }
        r = cache_formatted_flush(f);
        if (r < 0)
                return r;
        w->file = (Staged){ .fd = TAKE_FD(f->fd), .tmp = TAKE_PTR(f->path), .len = f->spilled };
        w->entries = f->entries;
        return 0;
}

/* Builds an index of @data into a temp file beside @ix->path, reading the data a chunk at a time. */
static int build_index(const Staged *data, unsigned field, IndexWork *ix) {
        _cleanup_(cache_index_builder_done) CacheIndexBuilder b = { .field = field };
        _cleanup_free_ char *buf = NULL;
        StrBuf out = {};
        int r = 0;

        if (data->len == 0)
                return 0; /* an empty map has no index file */
        buf = malloc(CHUNK);
        if (!buf)
                return -ENOMEM;
        for (uint64_t pos = 0; r >= 0 && pos < data->len;) {
                ssize_t got = fileio_pread_full(data->fd, buf,
                                                (size_t) MIN((uint64_t) CHUNK, data->len - pos), pos);

                if (got <= 0)
                        return got < 0 ? (int) got : -EIO;
                r = cache_index_feed(&b, buf, (size_t) got);
                pos += (uint64_t) got;
        }
        if (r >= 0)
                r = open_tmp(ix->path, &ix->file.fd, &ix->file.tmp);
        if (r >= 0)
                r = cache_index_finish(&b, ix->file.fd, &out, &ix->file.len);
        strbuf_done(&out);
        return r;
}

/* The part of @w for file @name (created empty, at the end, if new). */
static int automount_part(const CacheOptions *opts, MapWork *w, StrBuf **bufs, const char *name, size_t len,
                          size_t *ret) {
        _cleanup_free_ char *file = strndup(name, len);
        IndexWork *p;
        StrBuf *b;

        if (!file)
                return -ENOMEM;
        for (size_t i = 0; i < w->n_parts; i++)
                if (streq(w->parts[i].name, file)) {
                        *ret = i;
                        return 0;
                }
        if (!cache_format_automount_file_ok(file) || streq(file, NSS_AUTOMOUNT_MASTER))
                return -EBADMSG;
        p = reallocarray(w->parts, w->n_parts + 1, sizeof(IndexWork));
        if (!p)
                return -ENOMEM;
        w->parts = p;
        b = reallocarray(*bufs, w->n_parts + 1, sizeof(StrBuf));
        if (!b)
                return -ENOMEM;
        *bufs = b;
        b[w->n_parts] = (StrBuf){};
        p[w->n_parts] = (IndexWork){ .file.fd = -1, .path = cache_publish_automount_path(opts, file) };
        if (!p[w->n_parts].path)
                return -ENOMEM;
        p[w->n_parts].name = TAKE_PTR(file);
        *ret = w->n_parts++;
        return 0;
}

/* Writes @b into a temp file beside @path as @f. */
static int stage_bytes(const char *path, const StrBuf *b, Staged *f) {
        int r = open_tmp(path, &f->fd, &f->tmp);

        if (r < 0)
                return r;
        r = b->len > 0 ? fileio_write_all(f->fd, b->data, b->len) : 0;
        if (r < 0)
                return r;
        f->len = b->len;
        return 0;
}

/* The automount map's stream (render_automount(): each line led by its
 * file's name and a tab) split into auto.master, now w->file, and the
 * files of the maps it names, in the order they first come. */
static int split_automount(const CacheOptions *opts, MapWork *w) {
        _cleanup_free_ char *data = NULL;
        StrBuf master = {}, *bufs = NULL;
        size_t lines = 0;
        int r = 0;

        if (w->file.len > 0) {
                data = malloc(w->file.len);
                if (!data)
                        return -ENOMEM;
                if (fileio_pread_full(w->file.fd, data, w->file.len, 0) != (ssize_t) w->file.len)
                        return -EIO;
        }
        for (size_t pos = 0; r >= 0 && pos < w->file.len;) {
                const char *line = data + pos, *nl = memchr(line, '\n', w->file.len - pos),
                           *tab = nl ? memchr(line, '\t', (size_t) (nl - line)) : NULL;
                size_t k;

                if (!tab) {
                        r = -EBADMSG;
                        break;
                }
                if ((size_t) (tab - line) == strlen(NSS_AUTOMOUNT_MASTER) &&
                    strncmp(line, NSS_AUTOMOUNT_MASTER, (size_t) (tab - line)) == 0) {
                        strbuf_append(&master, tab + 1, (size_t) (nl + 1 - (tab + 1)));
                        lines++;
                } else if ((r = automount_part(opts, w, &bufs, line, (size_t) (tab - line), &k)) >= 0)
                        strbuf_append(bufs + k, tab + 1, (size_t) (nl + 1 - (tab + 1)));
                pos = (size_t) (nl + 1 - data);
        }
        if (r >= 0 && master.oom)
                r = -ENOMEM;
        for (size_t i = 0; r >= 0 && i < w->n_parts; i++)
                r = bufs[i].oom ? -ENOMEM : stage_bytes(w->parts[i].path, bufs + i, &w->parts[i].file);
        if (r >= 0) {
                staged_done(&w->file);
                r = stage_bytes(w->path, &master, &w->file);
                w->entries = lines;
        }
        for (size_t i = 0; i < w->n_parts; i++)
                strbuf_done(bufs + i);
        free(bufs);
        strbuf_done(&master);
        return r;
}

static int prepare_map(const CacheOptions *opts, CacheFormatted *f, NssMapType t, MapWork *w,
                       char **ret_error) {
        const CacheIndexSpec *specs;
        bool exists;
        int r;

        w->type = t;
        w->path = cache_publish_path(opts, t);
        if (!w->path)
                return -ENOMEM;

        if (f->type != t)
                return -EINVAL;
        if (f->buf.oom)
                return -ENOMEM;
        if (f->error == 0) {
                r = take_data(w, f);
                if (r < 0 && f->error == 0)
                        return append_error(ret_error, "%s: staging failed: %s", w->path, strerror(-r)) ?: r;
        }
        if (f->error < 0 && !f->error_text) /* writing the spilled text failed */
                return append_error(ret_error, "%s: staging failed: %s", w->path, strerror(-f->error))
                               ?: f->error;
        if (f->error < 0) {
                if (ret_error && f->error_text && !(*ret_error = strdup(f->error_text)))
                        return -ENOMEM;
                return f->error;
        }

        if (t == NSS_MAP_AUTOMOUNT) {
                r = split_automount(opts, w);
                if (r < 0)
                        return append_error(ret_error, "%s: staging failed: %s", w->path, strerror(-r)) ?: r;
        }
        resolve_perms(opts, t, &w->data_perms, &w->index_perms);

        r = compare_file(w->path, &w->file, &w->data_perms, &w->had_old, &w->old_entries, &w->newest);
        if (r < 0)
                return append_error(ret_error, "%s: %s", w->path, strerror(-r)) < 0 ? -ENOMEM : r;
        w->changed = r == 0;
        for (size_t i = 0; i < w->n_parts; i++) {
                IndexWork *p = w->parts + i;

                r = compare_file(p->path, &p->file, &w->data_perms, &exists, NULL, &w->newest);
                if (r < 0)
                        return append_error(ret_error, "%s: %s", p->path, strerror(-r)) < 0 ? -ENOMEM : r;
                if (r == 0)
                        w->changed = true;
        }

        w->n_index = cache_index_specs(t, &specs);
        for (size_t i = 0; i < w->n_index; i++) {
                IndexWork *ix = w->index + i;

                if (asprintf(&ix->path, "%s%s", w->path, specs[i].suffix) < 0)
                        return -ENOMEM;
                r = build_index(&w->file, specs[i].field, ix);
                if (r < 0)
                        return r;

                r = compare_file(ix->path, &ix->file, &w->index_perms, &exists, NULL, &w->newest);
                if (r < 0)
                        return append_error(ret_error, "%s: %s", ix->path, strerror(-r)) < 0 ? -ENOMEM : r;
                if (r == 0 && (exists || ix->file.len > 0))
                        w->changed = true;
                if (r == 1 && ix->file.len == 0)
                        w->changed = true; /* an empty index file where none belongs */
        }
        return 0;
}

/* passwd and shadow hold one entry per user: empty or short means the source
 * failed.  A group or sshkey map may be legitimately empty (no groups yet, no
 * user with a key), so it is refused empty only when it had entries before. */
static bool user_map(NssMapType t) {
        return t == NSS_MAP_PASSWD || t == NSS_MAP_SHADOW;
}

static int check_guards(const CacheOptions *opts, const MapWork *w, char **err) {
        const char *name = nss_map_to_string(w->type);
        int r = 0;

        if (!w->changed || opts->force)
                return 0;

        if (w->entries == 0 && (user_map(w->type) || w->old_entries > 0))
                r = append_error(err, "%s: the new map is empty", name) ?: 1;
        else if (user_map(w->type) && w->entries < opts->min_entries[w->type])
                r = append_error(err, "%s: %zu entries, fewer than the minimum of %zu", name, w->entries,
                                 opts->min_entries[w->type])
                            ?: 1;
        else if (opts->max_shrink_pct < 100 && w->old_entries > w->entries &&
                 (w->old_entries - w->entries) * 100 > (size_t) opts->max_shrink_pct * w->old_entries)
                r = append_error(err, "%s: would shrink from %zu to %zu entries, more than %u%%", name,
                                 w->old_entries, w->entries, opts->max_shrink_pct)
                            ?: 1;
        return r;
}

int cache_publish_spill(const CacheOptions *opts, CacheFormatted *f) {
        _cleanup_free_ char *path = NULL;
        char *tmp;
        int fd, r;

        if (f->fd >= 0 || cache_formatted_size(f) > 0)
                return -EBUSY;
        path = cache_publish_path(opts, f->type);
        if (!path)
                return -ENOMEM;
        r = open_tmp(path, &fd, &tmp);
        if (r < 0)
                return r;
        cache_formatted_spill(f, fd, tmp);
        return 0;
}

/* Gives the staged file of @path its @perms and @mtime and makes it durable. */
static int seal_file(const char *path, const Staged *f, const CachePerms *perms, time_t mtime) {
        int r;

        r = cache_journal_step("stage", path);
        if (r >= 0)
                r = RET_NERRNO(fchmod(f->fd, perms->mode));
        if (r >= 0 && perms->uid != (uid_t) -1)
                r = RET_NERRNO(fchown(f->fd, perms->uid, perms->gid));
        if (r >= 0)
                r = RET_NERRNO(futimens(f->fd, (const struct timespec[2]){ { .tv_nsec = UTIME_OMIT },
                                                                           { .tv_sec = mtime } }));
        if (r >= 0)
                r = RET_NERRNO(fsync(f->fd));
        return r;
}

/* Every file of the map gets one mtime, later than any it replaces.  No
 * order of renames can close the case of a reader that opened the old index
 * and opens the data only after our rename: the stale check compares mtimes
 * in whole seconds, so a republish within the same second passes it, and an
 * offset past the end of the new data makes libnss-cache return a status
 * glibc aborts on ("Illegal status in __nss_next").  Hence the same mtime
 * for all, one second past the newest of the map's files it replaces if the
 * clock has not yet moved past them: an old index is then always older than
 * a newer data file, and such a reader scans linearly.  A reader that opened
 * the old index and looked at the data's mtime just before our rename is
 * covered by the order of the journal's steps: every map's old indexes are
 * unlinked first, lookups already inside one are given a short drain, and
 * only then is any data renamed (cache-journal.c). */
static int stage_map(MapWork *w, time_t now) {
        time_t mtime = w->newest > 0 ? MAX(now, w->newest + 1) : now;
        int r;

        for (size_t i = 0; i < w->n_parts; i++) {
                r = seal_file(w->parts[i].path, &w->parts[i].file, &w->data_perms, mtime);
                if (r < 0)
                        return r;
        }
        r = seal_file(w->path, &w->file, &w->data_perms, mtime);
        if (r < 0)
                return r;
        for (size_t i = 0; i < w->n_index; i++) {
                IndexWork *ix = w->index + i;

                if (ix->file.len == 0)
                        continue;
                r = seal_file(ix->path, &ix->file, &w->index_perms, mtime);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int journal_add_path(CacheJournal *j, CacheJournalKind kind, const char *path) {
        const char *slash = strrchr(path, '/');

        return cache_journal_add(j, kind, slash ? slash + 1 : path);
}

/* The journal of the staged maps: the renames and unlinks cache_journal_apply() does. */
static int journal_build(const CacheOptions *opts, const MapWork *work, CacheJournal *j) {
        int r;

        j->dir = strdup(opts->dir);
        if (!j->dir)
                return -ENOMEM;
        for (size_t t = 0; t < _NSS_MAP_MAX; t++) {
                const MapWork *w = work + t;

                if (!opts->enabled[t] || !w->changed)
                        continue;
                /* the maps auto.master names before it, each renamed over as a map's data */
                for (size_t i = 0; i < w->n_parts; i++) {
                        r = journal_add_path(j, CACHE_JOURNAL_DATA, w->parts[i].file.tmp);
                        if (r < 0)
                                return r;
                }
                r = journal_add_path(j, CACHE_JOURNAL_DATA, w->file.tmp);
                for (size_t i = 0; r >= 0 && i < w->n_index; i++)
                        r = w->index[i].file.len > 0
                                    ? journal_add_path(j, CACHE_JOURNAL_INDEX, w->index[i].file.tmp)
                                    : journal_add_path(j, CACHE_JOURNAL_DROP, w->index[i].path);
                if (r < 0)
                        return r;
        }
        return 0;
}

static char *journal_path(const char *state_dir) {
        char *p;

        return asprintf(&p, "%s/" CACHE_JOURNAL_FILE, state_dir) < 0 ? NULL : p;
}

static int journal_remove(const char *path, char **ret_error) {
        int r;

        r = cache_journal_step("journal-remove", path);
        if (r >= 0 && unlink(path) < 0 && errno != ENOENT)
                r = negative_errno();
        if (r >= 0)
                r = fileio_fsync_dir(path);
        if (r < 0)
                (void) append_error(ret_error, "%s: cannot remove the journal: %s", path, strerror(-r));
        return r;
}

/* Applies @j; a failed step is tried once more before giving up, as a
 * rename can fail transiently.  The journal stays for the next run then. */
static int journal_run(const CacheJournal *j, const char *path, char **ret_error) {
        _cleanup_free_ char *first = NULL;
        int r;

        r = cache_journal_apply(j, &first);
        if (r < 0)
                r = cache_journal_apply(j, NULL);
        if (r < 0) {
                (void) append_error(ret_error, "%s", first ?: strerror(-r));
                return r;
        }
        return path ? journal_remove(path, ret_error) : 0;
}

static int commit_maps(const CacheOptions *opts, MapWork *work, bool *ret_pending, char **ret_error) {
        _cleanup_free_ char *path = NULL;
        CacheJournal j = {};
        int r;

        r = journal_build(opts, work, &j);
        if (r >= 0 && j.n == 0) {
                cache_journal_done(&j);
                return 0;
        }
        if (r >= 0 && opts->state_dir) {
                path = journal_path(opts->state_dir);
                r = path ? cache_journal_write(&j, path) : -ENOMEM;
                if (r < 0)
                        (void) append_error(ret_error, "%s: cannot write the journal: %s",
                                            path ?: opts->state_dir, strerror(-r));
        } else if (r < 0)
                (void) append_error(ret_error, "%s: cannot record the publish: %s", opts->dir, strerror(-r));
        if (r >= 0) {
                r = journal_run(&j, path, ret_error);
                *ret_pending = r < 0 && path && access(path, F_OK) >= 0;
                /* Renamed, or left for the journal's next run: not ours to unlink now.
                 * Without a journal, map_work_done() unlinks what is left. */
                for (size_t t = 0; (path || r >= 0) && t < _NSS_MAP_MAX; t++) {
                        if (!work[t].changed)
                                continue;
                        work[t].file.tmp = mfree(work[t].file.tmp);
                        for (size_t i = 0; i < work[t].n_index; i++)
                                work[t].index[i].file.tmp = mfree(work[t].index[i].file.tmp);
                        for (size_t i = 0; i < work[t].n_parts; i++)
                                work[t].parts[i].file.tmp = mfree(work[t].parts[i].file.tmp);
                }
        }
        cache_journal_done(&j);
        return r;
}

int cache_publish_pending(const char *state_dir) {
        _cleanup_free_ char *path = journal_path(state_dir);

        if (!path)
                return -ENOMEM;
        if (access(path, F_OK) >= 0)
                return 1;
        return errno == ENOENT ? 0 : -errno;
}

int cache_publish_recover(const char *state_dir, bool *ret_finished, char **ret_error) {
        _cleanup_free_ char *path = journal_path(state_dir);
        CacheJournal j = {};
        int r;

        *ret_finished = false;
        if (!path)
                return -ENOMEM;
        r = cache_journal_read(path, &j);
        if (r == -ENOENT)
                return 0;
        if (r == -EBADMSG) {
                /* Renaming the journal into place is atomic: a malformed one was never ours
                 * complete.  Drop it; the staged files go as stale temps. */
                (void) append_error(ret_error, "%s: malformed journal, discarded", path);
                (void) journal_remove(path, ret_error);
                return r;
        }
        if (r < 0)
                return append_error(ret_error, "%s: %s", path, strerror(-r)) ?: r;
        r = journal_run(&j, path, ret_error);
        cache_journal_done(&j);
        if (r >= 0)
                *ret_finished = true;
        return r;
}

/* Whether @target is the file of a map auto.master may name: auto.NAME[.SUFFIX]. */
static bool automount_target(const CacheOptions *opts, const char *target) {
        const char *suffix = opts->map_suffix[NSS_MAP_AUTOMOUNT] ?: opts->suffix;
        _cleanup_free_ char *stem = strdup(target);
        size_t n = stem ? strlen(stem) : 0, sl = isempty(suffix) ? 0 : strlen(suffix) + 1;

        if (!stem || n <= sl)
                return false;
        if (sl > 0) {
                if (stem[n - sl] != '.' || strcmp(stem + n - sl + 1, suffix) != 0)
                        return false;
                stem[n - sl] = 0;
        }
        return cache_format_automount_file_ok(stem);
}

/* Whether @name is NAME.XXXXXX staged for one of the files this publisher writes. */
static bool stale_name(const CacheOptions *opts, const char *name) {
        _cleanup_free_ char *target = NULL;

        if (cache_journal_target(name, &target) < 0)
                return false;
        for (NssMapType t = 0; t < _NSS_MAP_MAX; t++) {
                _cleanup_free_ char *path = cache_publish_path(opts, t);
                const CacheIndexSpec *specs;
                size_t n = cache_index_specs(t, &specs);
                const char *base = path ? strrchr(path, '/') : NULL;
                size_t bl;

                if (!base)
                        continue;
                base++;
                bl = strlen(base);
                if (strncmp(target, base, bl) != 0)
                        continue;
                if (target[bl] == '\0')
                        return true;
                for (size_t i = 0; i < n; i++)
                        if (streq(target + bl, specs[i].suffix))
                                return true;
        }
        return opts->enabled[NSS_MAP_AUTOMOUNT] && automount_target(opts, target);
}

/* Whether @name is the temp file a map of this run is spilled to. */
static bool spilled_name(const CacheFormatted *maps, const char *name) {
        for (size_t t = 0; maps && t < _NSS_MAP_MAX; t++) {
                const char *slash = maps[t].path ? strrchr(maps[t].path, '/') : NULL;

                if (slash && streq(slash + 1, name))
                        return true;
        }
        return false;
}

static int clean_stale(const CacheOptions *opts, const CacheFormatted *keep, unsigned *ret_removed) {
        _cleanup_closedir_ DIR *d = NULL;
        struct dirent *de;
        unsigned removed = 0;
        int r = 0;

        *ret_removed = 0;
        d = opendir(opts->dir);
        if (!d)
                return errno == ENOENT ? 0 : negative_errno();
        while ((de = readdir(d))) {
                struct stat st;

                if (!stale_name(opts, de->d_name) || spilled_name(keep, de->d_name))
                        continue;
                if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode) ||
                    st.st_uid != 0)
                        continue;
                if (unlinkat(dirfd(d), de->d_name, 0) < 0) {
                        if (r == 0 && errno != ENOENT)
                                r = negative_errno();
                        continue;
                }
                removed++;
        }
        *ret_removed = removed;
        return r;
}

int cache_publish_clean_stale(const CacheOptions *opts, unsigned *ret_removed) {
        return clean_stale(opts, NULL, ret_removed);
}

static int write_timestamp(const char *dir, NssMapType t, const char *kind, time_t when,
                           bool only_if_missing) {
        _cleanup_free_ char *path = NULL;
        char line[sizeof("YYYY-MM-DDThh:mm:ssZ\n") + 16];
        struct tm tm;
        size_t n;
        int r;

        if (asprintf(&path, "%s/timestamp-%s-%s", dir, nss_map_to_string(t), kind) < 0)
                return -ENOMEM;
        if (only_if_missing && access(path, F_OK) >= 0)
                return 0;
        if (!gmtime_r(&when, &tm))
                return -EOVERFLOW;
        n = strftime(line, sizeof(line), "%Y-%m-%dT%H:%M:%SZ\n", &tm);
        if (n == 0)
                return -EOVERFLOW;
        r = cache_journal_step("timestamp", path);
        if (r < 0)
                return r;
        return fileio_write_atomic(path, line, n, 0644, (uid_t) -1, (gid_t) -1);
}

static int write_timestamps(const CacheOptions *opts, const CacheReport *rep) {
        time_t now = opts->now ?: time(NULL);
        int r, ret = 0;

        r = fileio_mkdir_p(opts->timestamp_dir, 0755);
        if (r < 0)
                return r;
        for (size_t t = 0; t < _NSS_MAP_MAX; t++) {
                if (!opts->enabled[t])
                        continue;
                r = write_timestamp(opts->timestamp_dir, t, "modify", now, !rep->map[t].changed);
                if (r < 0 && ret == 0)
                        ret = r;
                r = write_timestamp(opts->timestamp_dir, t, "update", now, false);
                if (r < 0 && ret == 0)
                        ret = r;
        }
        return ret;
}

static void report_fill(CacheReport *rep, const CacheOptions *opts, const MapWork *work) {
        for (size_t t = 0; t < _NSS_MAP_MAX; t++) {
                if (!opts->enabled[t])
                        continue;
                rep->map[t] = (CacheMapReport){
                        .enabled = true,
                        .had_old = work[t].had_old,
                        .entries = work[t].entries,
                        .old_entries = work[t].old_entries,
                        .bytes = work[t].file.len,
                };
        }
}

/* Renders every enabled map, stopping at the first that cannot be rendered:
 * it keeps its error for prepare_map() to report in map order. */
static int format_maps(const CacheOptions *opts, const NssMaps *maps,
                       CacheFormatted f[static _NSS_MAP_MAX]) {
        for (NssMapType t = 0; t < _NSS_MAP_MAX; t++) {
                cache_formatted_init(f + t, t);
                if (!opts->enabled[t])
                        continue;
                f[t].error = cache_format_render(maps, t, &f[t].buf.data, &f[t].buf.len, &f[t].entries,
                                                 &f[t].error_text);
                if (f[t].error == -ENOMEM)
                        return -ENOMEM;
                if (f[t].error < 0)
                        break;
                f[t].buf.cap = f[t].buf.len + 1;
        }
        return 0;
}

int cache_publish(const CacheOptions *opts, const NssMaps *maps, CacheReport *ret_report, char **ret_error) {
        CacheFormatted f[_NSS_MAP_MAX] = {};
        int r;

        if (!opts || !maps || isempty(opts->dir))
                return -EINVAL;
        r = format_maps(opts, maps, f);
        if (r >= 0)
                r = cache_publish_formatted(opts, f, ret_report, ret_error);
        for (NssMapType t = 0; t < _NSS_MAP_MAX; t++)
                cache_formatted_done(f + t);
        return r;
}

/* Finishes a publish a crash or failure left, then clears killed runs' temps. */
static int publish_begin(const CacheOptions *opts, const CacheFormatted *maps, CacheReport *rep,
                         char **ret_error) {
        bool finished;
        int r;

        if (opts->state_dir) {
                r = cache_publish_recover(opts->state_dir, &finished, ret_error);
                if (r < 0 && r != -EBADMSG)
                        return r;
                rep->recovered = finished;
        }
        r = clean_stale(opts, maps, &rep->stale_removed);
        if (r < 0)
                return append_error(ret_error, "%s: cannot remove stale temporary files: %s", opts->dir,
                                    strerror(-r))
                               ?: r;
        return 0;
}

int cache_publish_formatted(const CacheOptions *opts, CacheFormatted maps[static _NSS_MAP_MAX],
                            CacheReport *ret_report, char **ret_error) {
        _cleanup_free_ char *err = NULL;
        CacheReport rep = {};
        MapWork work[_NSS_MAP_MAX];
        time_t now;
        int r;

        if (!opts || isempty(opts->dir))
                return -EINVAL;
        now = time(NULL); /* the files' mtime: the real clock, whatever opts->now says */
        for (size_t t = 0; t < _NSS_MAP_MAX; t++)
                map_work_init(work + t);

        r = publish_begin(opts, maps, &rep, &err);
        if (r < 0)
                goto out;

        for (size_t t = 0; t < _NSS_MAP_MAX; t++) {
                if (!opts->enabled[t])
                        continue;
                r = prepare_map(opts, maps + t, t, work + t, &err);
                if (r < 0)
                        goto out;
        }
        report_fill(&rep, opts, work);

        for (size_t t = 0; t < _NSS_MAP_MAX; t++) {
                if (!opts->enabled[t])
                        continue;
                r = check_guards(opts, work + t, &err);
                if (r < 0)
                        goto out;
        }
        if (err) {
                r = CACHE_PUBLISH_REFUSED;
                goto out;
        }

        for (size_t t = 0; t < _NSS_MAP_MAX; t++) {
                if (!opts->enabled[t] || !work[t].changed)
                        continue;
                r = stage_map(work + t, now);
                if (r < 0) {
                        (void) append_error(&err, "%s: staging failed: %s", work[t].path, strerror(-r));
                        goto out; /* map_work_done() unlinks every temp */
                }
        }

        r = commit_maps(opts, work, &rep.journal_pending, &err);
        if (r < 0)
                goto out;
        for (size_t t = 0; t < _NSS_MAP_MAX; t++)
                if (opts->enabled[t] && work[t].changed) {
                        rep.map[t].changed = true;
                        rep.n_changed++;
                }

        if (opts->timestamp_dir)
                rep.timestamp_error = write_timestamps(opts, &rep);
        r = 0;

out:
        for (size_t t = 0; t < _NSS_MAP_MAX; t++)
                map_work_done(work + t);
        if (ret_report)
                *ret_report = rep;
        if (r < 0 && ret_error)
                *ret_error = TAKE_PTR(err);
        return r;
}

int cache_publish_unchanged(const CacheOptions *opts, const CacheReport *known, CacheReport *ret_report,
                            char **ret_error) {
        CacheReport rep = {};
        int r;

        if (!opts || !known || isempty(opts->dir))
                return -EINVAL;
        r = clean_stale(opts, NULL, &rep.stale_removed);
        if (r < 0)
                return append_error(ret_error, "%s: cannot remove stale temporary files: %s", opts->dir,
                                    strerror(-r))
                               ?: r;
        for (size_t t = 0; t < _NSS_MAP_MAX; t++) {
                if (!opts->enabled[t])
                        continue;
                rep.map[t] = (CacheMapReport){
                        .enabled = true,
                        .had_old = known->map[t].had_old || known->map[t].changed,
                        .entries = known->map[t].entries,
                        .old_entries = known->map[t].entries,
                        .bytes = known->map[t].bytes,
                };
        }
        if (opts->timestamp_dir)
                rep.timestamp_error = write_timestamps(opts, &rep);
        if (ret_report)
                *ret_report = rep;
        return 0;
}

int cache_publish_inputs(const CacheOptions *opts, char ***ret_contents, char ***ret_perms) {
        _cleanup_strv_free_ char **contents = NULL, **perms = NULL;

        for (NssMapType t = 0; t < _NSS_MAP_MAX; t++) {
                _cleanup_free_ char *path = NULL;
                const CacheIndexSpec *specs;
                size_t n;

                if (!opts->enabled[t])
                        continue;
                path = cache_publish_path(opts, t);
                if (!path || strv_extend(&contents, path) < 0)
                        return -ENOMEM;
                n = cache_index_specs(t, &specs);
                for (size_t i = 0; i < n; i++)
                        if (strv_extendf(&contents, "%s%s", path, specs[i].suffix) < 0)
                                return -ENOMEM;
                if (opts->perms[t].mode == 0 &&
                    strv_extendf(&perms, "%s/%s", opts->compat_dir ?: "/etc", nss_map_to_string(t)) < 0)
                        return -ENOMEM;
        }
        *ret_contents = TAKE_PTR(contents);
        *ret_perms = TAKE_PTR(perms);
        return 0;
}
