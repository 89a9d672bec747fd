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
 * indexes are renamed in.  The indexes are staged after the data, so their
 * mtime is never older than the data's and the stale check passes.  What
 * remains is a reader that mapped the old index and opens the data only
 * after our rename; no ordering of two renames can close that window.
 *
 * A refresh publishes all enabled maps or none: every map and index is
 * rendered in memory and every guard (empty, below min_entries, shrinking by
 * more than max_shrink_pct) checked before the first byte is written; all
 * temp files are then staged (written, chmod/chown, fsync'ed) beside their
 * targets, and only if every one was staged are they renamed into place.
 * A failure while staging unlinks all temps: the old files stay
 * byte-identical.  A map whose bytes, indexes and permissions are unchanged
 * is not rewritten, so its inode and mtime stay and readers' page cache
 * stays warm.
 *
 * Timestamps follow nsscache (update/updater.py): timestamp_dir holds
 * timestamp-MAP-update, rewritten on every successful run, and
 * timestamp-MAP-modify, in the form "%Y-%m-%dT%H:%M:%SZ\n", mode 0644.
 * nsscache writes -modify from the source's Last-Modified, which SCIM does
 * not have; we write it when the map's bytes changed (or it is missing).
 *
 * Permissions follow nsscache (caches/caches.py, _Commit): the data file
 * copies mode and owner from /etc/MAP if that exists, else 0644 (sshkey
 * 0444); indexes likewise, else 0644.  The shadow cache is thereby 0640
 * root:shadow on Debian.  Callers may set them explicitly instead.
 */
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

#include "cache-format.h"
#include "cache-index.h"
#include "cache-publish.h"

#define MAX_INDEXES 2

typedef struct IndexWork {
        char *path;
        char *data; /* NULL when the map is empty: no index file at all */
        size_t len;
        char *tmp;
} IndexWork;

typedef struct MapWork {
        NssMapType type;
        char *path;
        const char *data; /* borrowed from the CacheFormatted */
        size_t len, entries;
        IndexWork index[MAX_INDEXES];
        size_t n_index;
        CachePerms data_perms, index_perms;
        char *tmp;
        bool changed, had_old;
        size_t old_entries;
} MapWork;

static void unlink_tmp(char **tmp) {
        if (*tmp) {
                (void) unlink(*tmp);
                *tmp = mfree(*tmp);
        }
}

static void map_work_done(MapWork *w) {
        unlink_tmp(&w->tmp);
        free(w->path);
        for (size_t i = 0; i < w->n_index; i++) {
                unlink_tmp(&w->index[i].tmp);
                free(w->index[i].path);
                free(w->index[i].data);
        }
        *w = (MapWork) {};
}

void cache_options_init(CacheOptions *opts) {
        *opts = (CacheOptions) {
                .dir = "/etc",
                .suffix = "cache",
                .max_shrink_pct = 50,
        };
        for (size_t t = 0; t < _NSS_MAP_MAX; t++) {
                opts->enabled[t] = true;
                opts->perms[t] = (CachePerms) { .mode = 0, .uid = (uid_t) -1, .gid = (gid_t) -1 };
        }
}

char *cache_publish_path(const CacheOptions *opts, NssMapType t) {
        char *p;

        if (asprintf(&p, "%s/%s%s%s", opts->dir, nss_map_to_string(t), isempty(opts->suffix) ? "" : ".",
                     opts->suffix ?: "") < 0)
                return NULL;
        return p;
}

_printf_(2, 3) static int append_error(char **err, const char *fmt, ...) {
        _cleanup_free_ char *s = NULL;
        char *joined;
        va_list ap;
        int k;

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

/* Compare the file at @path with @data, counting its lines on the way.
 * Return: 1 identical (content and permissions), 0 different or absent. */
static int compare_file(const char *path, const char *data, size_t len, const CachePerms *perms,
                        bool *ret_exists, size_t *ret_lines) {
        _cleanup_close_ int fd = -1;
        _cleanup_free_ char *buf = NULL;
        size_t pos = 0, lines = 0;
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

        if ((st.st_mode & 07777) != perms->mode ||
            (perms->uid != (uid_t) -1 && (st.st_uid != perms->uid || st.st_gid != perms->gid)) ||
            (size_t) st.st_size != len)
                same = false;
        /* Without a line count to take, a size mismatch settles it. */
        if (!same && !ret_lines)
                return 0;

        buf = malloc(64 * 1024);
        if (!buf)
                return -ENOMEM;
        for (;;) {
                ssize_t k = read(fd, buf, 64 * 1024);
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
                if (same && (pos + (size_t) k > len || memcmp(buf, data + pos, (size_t) k) != 0))
                        same = false;
                pos += (size_t) k;
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

        r = compare_file(path, "", 0, &none, &exists, ret);
        return r < 0 ? r : 0;
}

static int prepare_map(const CacheOptions *opts, const CacheFormatted *f, NssMapType t, MapWork *w,
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
        if (f->error < 0) {
                if (ret_error && f->error_text && !(*ret_error = strdup(f->error_text)))
                        return -ENOMEM;
                return f->error;
        }
        if (f->buf.oom)
                return -ENOMEM;
        w->data = f->buf.data ?: "";
        w->len = f->buf.len;
        w->entries = f->entries;

        resolve_perms(opts, t, &w->data_perms, &w->index_perms);

        r = compare_file(w->path, w->data, w->len, &w->data_perms, &w->had_old, &w->old_entries);
        if (r < 0)
                return append_error(ret_error, "%s: %s", w->path, strerror(-r)) < 0 ? -ENOMEM : r;
        w->changed = r == 0;

        w->n_index = cache_index_specs(t, &specs);
        for (size_t i = 0; i < w->n_index; i++) {
                IndexWork *ix = w->index + i;

                if (asprintf(&ix->path, "%s%s", w->path, specs[i].suffix) < 0)
                        return -ENOMEM;
                r = cache_index_build(w->data, w->len, specs[i].field, &ix->data, &ix->len);
                if (r < 0)
                        return r;

                r = compare_file(ix->path, ix->data ?: "", ix->len, &w->index_perms, &exists, NULL);
                if (r < 0)
                        return append_error(ret_error, "%s: %s", ix->path, strerror(-r)) < 0 ? -ENOMEM : r;
                if (r == 0 && (exists || ix->data))
                        w->changed = true;
                if (r == 1 && !ix->data)
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
                                 opts->min_entries[w->type]) ?: 1;
        else if (opts->max_shrink_pct < 100 && w->old_entries > w->entries &&
                 (w->old_entries - w->entries) * 100 > (size_t) opts->max_shrink_pct * w->old_entries)
                r = append_error(err, "%s: would shrink from %zu to %zu entries, more than %u%%", name,
                                 w->old_entries, w->entries, opts->max_shrink_pct) ?: 1;
        return r;
}

static int stage_map(MapWork *w) {
        int r;

        r = fileio_stage(w->path, w->data ?: "", w->len, w->data_perms.mode, w->data_perms.uid,
                         w->data_perms.gid, &w->tmp);
        if (r < 0)
                return r;
        for (size_t i = 0; i < w->n_index; i++) {
                IndexWork *ix = w->index + i;

                if (!ix->data)
                        continue;
                r = fileio_stage(ix->path, ix->data, ix->len, w->index_perms.mode, w->index_perms.uid,
                                 w->index_perms.gid, &ix->tmp);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int commit_map(MapWork *w, char **ret_error) {
        const char *failed;
        int r;

        for (size_t i = 0; i < w->n_index; i++)
                if (unlink(w->index[i].path) < 0 && errno != ENOENT) {
                        r = negative_errno();
                        failed = w->index[i].path;
                        goto fail;
                }

        r = fileio_commit(w->tmp, w->path);
        w->tmp = mfree(w->tmp); /* renamed, or unlinked by fileio_commit */
        if (r < 0) {
                failed = w->path;
                goto fail;
        }
        for (size_t i = 0; i < w->n_index; i++) {
                IndexWork *ix = w->index + i;

                if (!ix->tmp)
                        continue;
                r = fileio_commit(ix->tmp, ix->path);
                ix->tmp = mfree(ix->tmp);
                if (r < 0) {
                        failed = ix->path;
                        goto fail;
                }
        }
        return 0;

fail:
        (void) append_error(ret_error, "%s: %s", failed, strerror(-r));
        return r;
}

static int mkdir_parents(const char *dir) {
        _cleanup_free_ char *p = strdup(dir);

        if (!p)
                return -ENOMEM;
        for (char *s = p + 1; *s; s++) {
                if (*s != '/')
                        continue;
                *s = '\0';
                if (mkdir(p, 0755) < 0 && errno != EEXIST)
                        return negative_errno();
                *s = '/';
        }
        if (mkdir(p, 0755) < 0 && errno != EEXIST)
                return negative_errno();
        return 0;
}

static int write_timestamp(const char *dir, NssMapType t, const char *kind, time_t when,
                           bool only_if_missing) {
        _cleanup_free_ char *path = NULL;
        char line[sizeof("YYYY-MM-DDThh:mm:ssZ\n") + 16];
        struct tm tm;
        size_t n;

        if (asprintf(&path, "%s/timestamp-%s-%s", dir, nss_map_to_string(t), kind) < 0)
                return -ENOMEM;
        if (only_if_missing && access(path, F_OK) >= 0)
                return 0;
        if (!gmtime_r(&when, &tm))
                return -EOVERFLOW;
        n = strftime(line, sizeof(line), "%Y-%m-%dT%H:%M:%SZ\n", &tm);
        if (n == 0)
                return -EOVERFLOW;
        return fileio_write_atomic(path, line, n, 0644, (uid_t) -1, (gid_t) -1);
}

static int write_timestamps(const CacheOptions *opts, const MapWork *work) {
        time_t now = opts->now ?: time(NULL);
        int r, ret = 0;

        r = mkdir_parents(opts->timestamp_dir);
        if (r < 0)
                return r;
        for (size_t t = 0; t < _NSS_MAP_MAX; t++) {
                if (!opts->enabled[t])
                        continue;
                r = write_timestamp(opts->timestamp_dir, t, "modify", now, !work[t].changed);
                if (r < 0 && ret == 0)
                        ret = r;
                r = write_timestamp(opts->timestamp_dir, t, "update", now, false);
                if (r < 0 && ret == 0)
                        ret = r;
        }
        return ret;
}

static void report_fill(CacheReport *rep, const CacheOptions *opts, const MapWork *work) {
        *rep = (CacheReport) {};
        for (size_t t = 0; t < _NSS_MAP_MAX; t++) {
                if (!opts->enabled[t])
                        continue;
                rep->map[t] = (CacheMapReport) {
                        .enabled = true,
                        .had_old = work[t].had_old,
                        .entries = work[t].entries,
                        .old_entries = work[t].old_entries,
                        .bytes = work[t].len,
                };
        }
}

/* Renders every enabled map, stopping at the first that cannot be rendered:
 * it keeps its error for prepare_map() to report in map order. */
static int format_maps(const CacheOptions *opts, const NssMaps *maps, CacheFormatted f[static _NSS_MAP_MAX]) {
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

int cache_publish_formatted(const CacheOptions *opts, const CacheFormatted maps[static _NSS_MAP_MAX],
                            CacheReport *ret_report, char **ret_error) {
        _cleanup_free_ char *err = NULL;
        CacheReport rep = {};
        MapWork work[_NSS_MAP_MAX] = {};
        int r;

        if (!opts || !maps || isempty(opts->dir))
                return -EINVAL;

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
                r = stage_map(work + t);
                if (r < 0) {
                        (void) append_error(&err, "%s: staging failed: %s", work[t].path, strerror(-r));
                        goto out; /* map_work_done() unlinks every temp */
                }
        }

        for (size_t t = 0; t < _NSS_MAP_MAX; t++) {
                if (!opts->enabled[t] || !work[t].changed)
                        continue;
                r = commit_map(work + t, &err);
                if (r < 0)
                        goto out;
                rep.map[t].changed = true;
                rep.n_changed++;
        }

        if (opts->timestamp_dir)
                rep.timestamp_error = write_timestamps(opts, work);
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
