/* The memo of an unchanged refresh, and the digests it is checked by. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "refresh-memo.h"
#include "util/cleanup.h"
#include "util/fileio.h"
#include "util/strv.h"

#define READ_CHUNK (64 * 1024)

void refresh_rejects_done(MapRejects *r) {
        for (size_t i = 0; i < r->n_records; i++)
                free(r->records[i].name);
        free(r->records);
        *r = (MapRejects){};
}

RefreshMemo *refresh_memo_free(RefreshMemo *m) {
        if (!m)
                return NULL;
        fetch_record_done(&m->record);
        refresh_rejects_done(&m->rejects);
        free(m);
        return NULL;
}

int refresh_rejects_copy(MapRejects *to, const MapRejects *from) {
        MapRejects r = { .total = from->total };

        memcpy(r.count, from->count, sizeof(r.count));
        if (from->n_records > 0) {
                r.records = calloc(from->n_records, sizeof(*r.records));
                if (!r.records)
                        return -ENOMEM;
        }
        for (size_t i = 0; i < from->n_records; i++, r.n_records++) {
                r.records[i] = from->records[i];
                if (from->records[i].name && !(r.records[i].name = strdup(from->records[i].name))) {
                        refresh_rejects_done(&r);
                        return -ENOMEM;
                }
        }
        *to = r;
        return 0;
}

/* The contents of the regular file open at @fd. */
static int feed_contents(Digest *md, int fd) {
        _cleanup_free_ char *buf = malloc(READ_CHUNK);
        uint64_t pos = 0;

        if (!buf)
                return -ENOMEM;
        for (;;) {
                ssize_t n = fileio_pread_full(fd, buf, READ_CHUNK, pos);
                int r;

                if (n < 0)
                        return (int) n;
                if (n == 0)
                        return 0;
                r = digest_feed(md, buf, (size_t) n);
                if (r < 0)
                        return r;
                pos += (uint64_t) n;
        }
}

typedef enum Look {
        LOOK_STAT,     /* stat(): any write changes it */
        LOOK_CONTENTS, /* contents, type, mode, owner */
        LOOK_PERMS,    /* type, mode, owner */
} Look;

/* One file: its name, then what @look says of it.  Links are followed, as
 * the publish and the account readers follow them. */
static int feed_file(Digest *md, const char *path, Look look) {
        _cleanup_close_ int fd = -EBADF;
        struct stat st;
        uint64_t meta[10] = {};
        int r;

        r = digest_feed(md, path, strlen(path) + 1);
        if (r < 0)
                return r;
        if (look == LOOK_CONTENTS) {
                /* O_NONBLOCK: a FIFO put in a map's place must not hang the run */
                fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
                if (fd < 0 && errno != ENOENT)
                        return -errno;
                r = fd >= 0 ? fstat(fd, &st) : -1;
        } else
                r = stat(path, &st);
        if (r < 0 && errno == ENOENT)
                return digest_feed(md, "-", 1);
        if (r < 0)
                return -errno;
        meta[0] = st.st_mode;
        meta[1] = st.st_uid;
        meta[2] = st.st_gid;
        if (look != LOOK_PERMS)
                meta[3] = (uint64_t) st.st_size;
        if (look == LOOK_STAT) {
                meta[4] = st.st_dev;
                meta[5] = st.st_ino;
                meta[6] = (uint64_t) st.st_mtim.tv_sec;
                meta[7] = (uint64_t) st.st_mtim.tv_nsec;
                meta[8] = (uint64_t) st.st_ctim.tv_sec;
                meta[9] = (uint64_t) st.st_ctim.tv_nsec;
        }
        r = digest_feed(md, meta, sizeof(meta));
        if (r < 0 || look != LOOK_CONTENTS || !S_ISREG(st.st_mode))
                return r;
        return feed_contents(md, fd);
}

int refresh_files_digest(const NsscacheConf *c, const CacheOptions *opts,
                         const uint8_t key[static DIGEST_KEY_LEN], bool contents,
                         uint8_t ret[static DIGEST_LEN]) {
        _cleanup_(digest_freep) Digest *md = NULL;
        _cleanup_strv_free_ char **data = NULL, **perms = NULL;
        Look look = contents ? LOOK_CONTENTS : LOOK_STAT;
        int r;

        r = digest_new(key, &md);
        if (r >= 0)
                r = digest_begin(md);
        if (r >= 0)
                r = cache_publish_inputs(opts, &data, &perms);
        if (r < 0)
                return r;
        for (char **p = data; p && *p && r >= 0; p++)
                r = feed_file(md, *p, look);
        /* only their permissions are copied: what they hold is not read */
        for (char **p = perms; p && *p && r >= 0; p++)
                r = feed_file(md, *p, contents ? LOOK_PERMS : LOOK_STAT);
        if (r >= 0)
                r = feed_file(md, c->local_passwd, look);
        if (r >= 0)
                r = feed_file(md, c->local_group, look);
        if (r < 0)
                return r;
        return digest_end(md, ret);
}
