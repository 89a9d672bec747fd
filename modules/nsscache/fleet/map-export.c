/* export_dir: content-addressed maps, gzip copies, a signed manifest last (map-export.h). */
#include <dirent.h>
#include <fcntl.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <zlib.h>

#include "manifest.h"
#include "map-delta.h"
#include "map-export.h"
#include "util/cleanup.h"
#include "util/errloc.h"
#include "util/fileio.h"
#include "util/macro.h"
#include "util/secret-file.h"

#define EXPORT_MODE 0644

int map_export_key_load(const char *path, EVP_PKEY **ret, char **ret_error) {
        _cleanup_erase_ char *pem = NULL;
        int r;

        r = secret_file_read(path, EXPORT_KEY_MAX, &pem, ret_error);
        if (r < 0)
                return r;
        r = manifest_key_private(pem, strlen(pem), ret);
        if (r == -EBADMSG)
                return errmsg_set(ret_error, r, "'%s': not an Ed25519 private key in PEM", path);
        return r;
}

/* @in gzip-compressed (RFC 1952), as a web server's gzip_static serves it. */
static int gzip_encode(const char *in, size_t len, char **ret, size_t *ret_len) {
        z_stream z = {};
        _cleanup_free_ char *out = NULL;
        size_t cap;
        int r;

        if (deflateInit2(&z, 9, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY) != Z_OK)
                return -ENOMEM;
        cap = deflateBound(&z, len);
        out = malloc(cap);
        if (!out) {
                deflateEnd(&z);
                return -ENOMEM;
        }
        z.next_in = (Bytef *) in;
        z.avail_in = (uInt) len;
        z.next_out = (Bytef *) out;
        z.avail_out = (uInt) cap;
        r = deflate(&z, Z_FINISH);
        *ret_len = z.total_out;
        deflateEnd(&z);
        if (r != Z_STREAM_END)
                return -EIO;
        *ret = TAKE_PTR(out);
        return 0;
}

static int write_file(const char *dir, const char *name, const char *data, size_t len, char **ret_error) {
        _cleanup_free_ char *path = NULL;
        int r;

        if (asprintf(&path, "%s/%s", dir, name) < 0)
                return -ENOMEM;
        r = fileio_write_atomic(path, data, len, EXPORT_MODE, (uid_t) -1, (gid_t) -1);
        if (r < 0)
                return errmsg_set(ret_error, r, "cannot write '%s': %s", path, strerror(-r));
        return 0;
}

/* NAME unless it is there already: the name is its content's digest. */
static int write_file_once(const char *dir, const char *name, const char *data, size_t len,
                           char **ret_error) {
        _cleanup_free_ char *path = NULL;
        struct stat st;

        if (asprintf(&path, "%s/%s", dir, name) < 0)
                return -ENOMEM;
        if (lstat(path, &st) == 0 && S_ISREG(st.st_mode) && (uint64_t) st.st_size == len)
                return 0;
        return write_file(dir, name, data, len, ret_error);
}

/* NAME.gz, then NAME, unless NAME is there already: the name is its content's digest. */
static int write_once(const char *dir, const char *name, const char *data, size_t len, char **ret_error) {
        _cleanup_free_ char *path = NULL, *gz = NULL, *gzname = NULL;
        struct stat st;
        size_t gzlen;
        int r;

        if (asprintf(&path, "%s/%s", dir, name) < 0 || asprintf(&gzname, "%s.gz", name) < 0)
                return -ENOMEM;
        if (lstat(path, &st) == 0 && S_ISREG(st.st_mode) && (uint64_t) st.st_size == len)
                return 0;
        r = gzip_encode(data, len, &gz, &gzlen);
        if (r < 0)
                return errmsg_set(ret_error, r, "cannot compress '%s': %s", path, strerror(-r));
        /* the gzip copy first: whoever sees the plain file may ask for it */
        r = write_file(dir, gzname, gz, gzlen, ret_error);
        return r < 0 ? r : write_file(dir, name, data, len, ret_error);
}

/* The delta from the file @prev names in export_dir to @data, if it is
 * well under a quarter of the map: past that the gzip copy costs a node
 * about as much and needs no base. */
static int export_delta(const char *dir, NssMapType t, const ManifestMap *prev, const char *data, size_t len,
                        ManifestDelta *ret, char **ret_error) {
        _cleanup_free_ char *path = NULL, *old = NULL, *delta = NULL;
        uint8_t md[MANIFEST_SHA256_LEN];
        char hex[2 * MANIFEST_SHA256_LEN + 1];
        size_t olen, dlen;
        unsigned n;
        int r;

        if (asprintf(&path, "%s/%s", dir, prev->file) < 0)
                return -ENOMEM;
        /* a previous file that is gone or not what its manifest says gets no delta: nodes fetch the map */
        if (fileio_read(path, HTTP_MAX_SIZE_MAX, &old, &olen) < 0 || olen != prev->size ||
            EVP_Digest(old, olen, md, &n, EVP_sha256(), NULL) != 1 ||
            memcmp(md, prev->sha256, sizeof(md)) != 0)
                return 0;
        r = map_delta_make(old, olen, data, len, len / 4, &delta, &dlen);
        if (r == -E2BIG || r == -EINVAL)
                return 0;
        if (r < 0)
                return r;
        if (EVP_Digest(delta, dlen, ret->sha256, &n, EVP_sha256(), NULL) != 1)
                return -ENOMEM;
        manifest_sha256_hex(ret->sha256, hex);
        if (asprintf(&ret->file, "%s-delta-%s", nss_map_to_string(t), hex) < 0) {
                ret->file = NULL;
                return -ENOMEM;
        }
        ret->size = dlen;
        ret->from_size = prev->size;
        memcpy(ret->from, prev->sha256, sizeof(ret->from));
        ret->present = true;
        r = write_file_once(dir, ret->file, delta, dlen, ret_error);
        return r;
}

/* The delta @prev carries, when the map is the same and its file is still there. */
static int keep_delta(const char *dir, const ManifestDelta *prev, ManifestDelta *ret) {
        _cleanup_free_ char *path = NULL;
        struct stat st;

        if (!prev->present)
                return 0;
        if (asprintf(&path, "%s/%s", dir, prev->file) < 0)
                return -ENOMEM;
        if (lstat(path, &st) < 0 || !S_ISREG(st.st_mode) || (uint64_t) st.st_size != prev->size)
                return 0;
        *ret = *prev;
        ret->file = strdup(prev->file);
        if (!ret->file) {
                *ret = (ManifestDelta){};
                return -ENOMEM;
        }
        return 0;
}

/* Map @t as published: its digest and size into @mm, its files (and the
 * delta from @prev, the map the last manifest named) into export_dir. */
static int export_map(const NsscacheConf *c, const CacheOptions *opts, NssMapType t, const ManifestMap *prev,
                      ManifestMap *mm, char **ret_error) {
        _cleanup_free_ char *path = cache_publish_path(opts, t), *data = NULL;
        char hex[2 * MANIFEST_SHA256_LEN + 1];
        size_t len;
        unsigned n;
        int r;

        if (!path)
                return -ENOMEM;
        r = fileio_read(path, HTTP_MAX_SIZE_MAX, &data, &len);
        if (r < 0)
                return errmsg_set(ret_error, r, "cannot read '%s' to export it: %s", path, strerror(-r));
        if (EVP_Digest(data, len, mm->sha256, &n, EVP_sha256(), NULL) != 1)
                return -ENOMEM;
        manifest_sha256_hex(mm->sha256, hex);
        if (asprintf(&mm->file, "%s-%s", nss_map_to_string(t), hex) < 0) {
                mm->file = NULL;
                return -ENOMEM;
        }
        mm->size = len;
        mm->present = true;
        r = write_once(c->export_dir, mm->file, data, len, ret_error);
        if (r < 0 || !prev->present)
                return r;
        if (strcmp(prev->file, mm->file) == 0)
                return keep_delta(c->export_dir, &prev->delta, &mm->delta);
        return export_delta(c->export_dir, t, prev, data, len, &mm->delta, ret_error);
}

static char *generation_path(const CacheOptions *opts) {
        char *p;

        if (!opts->state_dir || asprintf(&p, "%s/%s", opts->state_dir, EXPORT_GENERATION_FILE) < 0)
                return NULL;
        return p;
}

/* The generation exported last as the state directory has it; 0 before the first. */
static int state_generation(const CacheOptions *opts, uint64_t *ret, char **ret_error) {
        _cleanup_free_ char *path = generation_path(opts), *text = NULL;
        uint64_t g = 0;
        size_t len;
        int r, n;

        if (!opts->state_dir)
                return errmsg_set(ret_error, -EINVAL, "no state directory to keep the export generation in");
        if (!path)
                return -ENOMEM;
        r = fileio_read(path, 64, &text, &len);
        if (r < 0 && r != -ENOENT)
                return errmsg_set(ret_error, r, "cannot read '%s': %s", path, strerror(-r));
        if (r >= 0 && (sscanf(text, "%" SCNu64 "%n", &g, &n) != 1 || text[n + strspn(text + n, "\n")] != 0 ||
                       g >= MANIFEST_GENERATION_MAX))
                return errmsg_set(ret_error, -EBADMSG, "'%s': not a generation number", path);
        *ret = g;
        return 0;
}

/* The generation after @last, written before any manifest carries it: a
 * crash never hands a number out twice. */
static int next_generation(const CacheOptions *opts, uint64_t last, uint64_t *ret, char **ret_error) {
        _cleanup_free_ char *path = generation_path(opts);
        char buf[32];
        int r, n;

        if (!path)
                return -ENOMEM;
        if (last + 1 > MANIFEST_GENERATION_MAX)
                return errmsg_set(ret_error, -EOVERFLOW, "'%s': the generation is at its end", path);
        n = snprintf(buf, sizeof(buf), "%" PRIu64 "\n", last + 1);
        r = fileio_write_atomic(path, buf, (size_t) n, 0644, (uid_t) -1, (gid_t) -1);
        if (r < 0)
                return errmsg_set(ret_error, r, "cannot write '%s': %s", path, strerror(-r));
        *ret = last + 1;
        return 0;
}

static bool is_export_file(const char *name) {
        const char *dash = strrchr(name, '-');
        size_t n;

        size_t prefix;

        if (!dash)
                return false;
        prefix = (size_t) (dash - name);
        n = strspn(dash + 1, "0123456789abcdef");
        if (n != 2 * MANIFEST_SHA256_LEN)
                return false;
        /* MAP-delta-HEX: a delta, never compressed */
        if (prefix > 6 && strncmp(dash - 6, "-delta", 6) == 0)
                return nss_map_from_string(strndupa(name, prefix - 6)) != (NssMapType) -1 &&
                       dash[1 + n] == 0;
        return nss_map_from_string(strndupa(name, prefix)) != (NssMapType) -1 &&
               (dash[1 + n] == 0 || strcmp(dash + 1 + n, ".gz") == 0);
}

static bool named_by(const Manifest *m, const char *name) {
        for (size_t t = 0; t < _NSS_MAP_MAX; t++) {
                size_t n = m->map[t].file ? strlen(m->map[t].file) : 0;

                if (n && strncmp(name, m->map[t].file, n) == 0 &&
                    (name[n] == 0 || strcmp(name + n, ".gz") == 0))
                        return true;
                if (m->map[t].delta.file && strcmp(name, m->map[t].delta.file) == 0)
                        return true;
        }
        return false;
}

/* Files of neither @now nor @before are removed; failures only leave them. */
static void remove_old(const char *dir, const Manifest *now, const Manifest *before) {
        _cleanup_closedir_ DIR *d = opendir(dir);
        struct dirent *de;

        if (!d)
                return;
        while ((de = readdir(d)))
                if (is_export_file(de->d_name) && !named_by(now, de->d_name) &&
                    !named_by(before, de->d_name))
                        (void) unlinkat(dirfd(d), de->d_name, 0);
}

/* Whether @a and @b name the same files (the names are the digests). */
static bool same_maps(const Manifest *a, const Manifest *b) {
        for (size_t t = 0; t < _NSS_MAP_MAX; t++)
                if (a->map[t].present != b->map[t].present ||
                    (a->map[t].present && strcmp(a->map[t].file, b->map[t].file) != 0))
                        return false;
        return true;
}

/* The manifest export_dir holds now, if it is ours (signed by @key). */
static void read_previous(const char *path, EVP_PKEY *key, Manifest *ret) {
        _cleanup_free_ char *text = NULL;
        size_t len;

        if (fileio_read(path, MANIFEST_MAX, &text, &len) >= 0)
                (void) manifest_verify(text, len, key, ret, NULL);
}

/* What identifies each enabled map as published: a publish renames a new
 * file over a changed map, so its inode and mtime change. */
static void maps_stat(const CacheOptions *opts, struct stat st[static _NSS_MAP_MAX]) {
        for (NssMapType t = 0; t < _NSS_MAP_MAX; t++) {
                _cleanup_free_ char *path = opts->enabled[t] ? cache_publish_path(opts, t) : NULL;

                st[t] = (struct stat){};
                if (path)
                        (void) stat(path, &st[t]);
        }
}

static bool maps_same(const struct stat a[static _NSS_MAP_MAX], const struct stat b[static _NSS_MAP_MAX]) {
        for (NssMapType t = 0; t < _NSS_MAP_MAX; t++)
                if (a[t].st_dev != b[t].st_dev || a[t].st_ino != b[t].st_ino ||
                    a[t].st_size != b[t].st_size || a[t].st_mtim.tv_sec != b[t].st_mtim.tv_sec ||
                    a[t].st_mtim.tv_nsec != b[t].st_mtim.tv_nsec)
                        return false;
        return true;
}

/* A publish in progress (its journal there) or one that renamed a map
 * while the maps were read: what was read may be maps of two runs. */
static int maps_moved(const CacheOptions *opts, const struct stat before[static _NSS_MAP_MAX],
                      char **ret_error) {
        struct stat now[_NSS_MAP_MAX];

        maps_stat(opts, now);
        if ((opts->state_dir && cache_publish_pending(opts->state_dir) != 0) || !maps_same(before, now))
                return errmsg_set(ret_error, -EAGAIN,
                                  "the maps were published again while they were exported");
        return 0;
}

/* A web server's validators count whole seconds (Last-Modified; nginx's
 * ETag is the mtime and the size): a manifest replaced within the second
 * of the one before it, at its size, would be answered 304 to a node that
 * holds the old one.  So the new one's mtime is past the old one's. */
static int mtime_past(const char *path, const struct stat *old) {
        struct timespec ts[2] = { { .tv_nsec = UTIME_OMIT }, { 0 } };
        struct stat st;

        if (!old || stat(path, &st) < 0 || st.st_mtime > old->st_mtime)
                return 0;
        ts[1].tv_sec = old->st_mtime + 1;
        return utimensat(AT_FDCWD, path, ts, 0) < 0 ? -errno : 0;
}

int map_export(const NsscacheConf *c, const CacheOptions *opts, const CacheReport *report,
               uint64_t *ret_generation, char **ret_error) {
        struct stat maps_before[_NSS_MAP_MAX];
        _cleanup_(evp_pkey_freep) EVP_PKEY *key = NULL;
        _cleanup_(manifest_done) Manifest m = {}, before = {};
        _cleanup_free_ char *path = NULL, *text = NULL;
        struct stat old;
        bool had_old;
        uint64_t last = 0;
        size_t len;
        int r;

        *ret_generation = 0;
        if (!c->export_dir)
                return 0;
        if (asprintf(&path, "%s/%s", c->export_dir, EXPORT_MANIFEST) < 0)
                return -ENOMEM;
        r = map_export_key_load(c->export_signing_key, &key, ret_error);
        if (r < 0)
                return r;
        read_previous(path, key, &before);
        maps_stat(opts, maps_before);
        r = maps_moved(opts, maps_before, ret_error);
        if (r < 0)
                return r;
        for (NssMapType t = 0; t < _NSS_MAP_MAX; t++) {
                if (!opts->enabled[t])
                        continue;
                r = export_map(c, opts, t, before.map + t, m.map + t, ret_error);
                if (r < 0)
                        return r;
        }
        r = maps_moved(opts, maps_before, ret_error);
        if (r < 0)
                return r;
        r = state_generation(opts, &last, ret_error);
        if (r < 0)
                return r;
        /* the maps it names are these: nothing to tell the nodes, no new
         * generation, unless it is due to be signed again (manifest_max_age)
         * or the admin raised the generation past it (nodes that applied a
         * higher one refuse it) */
        if (before.generation > 0 && same_maps(&m, &before) && last <= before.generation &&
            (c->export_resign_usec == 0 ||
             (int64_t) time(NULL) - before.time < (int64_t) (c->export_resign_usec / SUNKD_USEC_PER_SEC)))
                return 0;
        m.users = report->map[NSS_MAP_PASSWD].entries;
        m.groups = report->map[NSS_MAP_GROUP].entries;
        m.time = (int64_t) time(NULL);
        /* a state directory that was lost or restored from an older backup
         * must not take the directory served backwards: nodes refuse that */
        r = next_generation(opts, MAX(last, before.generation), &m.generation, ret_error);
        if (r < 0)
                return r;
        r = manifest_sign(&m, key, &text, &len);
        if (r < 0)
                return errmsg_set(ret_error, r, "cannot sign the manifest: %s", strerror(-r));
        had_old = stat(path, &old) == 0;
        r = fileio_write_atomic(path, text, len, EXPORT_MODE, (uid_t) -1, (gid_t) -1);
        if (r < 0)
                return errmsg_set(ret_error, r, "cannot write '%s': %s", path, strerror(-r));
        r = mtime_past(path, had_old ? &old : NULL);
        if (r < 0)
                return errmsg_set(ret_error, r, "cannot set the time of '%s': %s", path, strerror(-r));
        remove_old(c->export_dir, &m, &before);
        *ret_generation = m.generation;
        return 0;
}
