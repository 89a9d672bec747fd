/* What tells a refresh unchanged: keyed digests, the digest of the files a
 * refresh reads, and the copies a memo keeps. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "modules/nsscache/digest.h"
#include "modules/nsscache/nsscache-refresh.h"
#include "modules/nsscache/refresh-memo.h"
#include "util/cleanup.h"
#include "../lib/check-run.h"

static const uint8_t key1[DIGEST_KEY_LEN] = { 1 }, key2[DIGEST_KEY_LEN] = { 2 };

static void digest_of(const uint8_t *key, const char *const *parts, uint8_t out[DIGEST_LEN]) {
        _cleanup_(digest_freep) Digest *d = NULL;

        ck_assert_int_eq(digest_new(key, &d), 0);
        ck_assert_int_eq(digest_begin(d), 0);
        for (; *parts; parts++)
                ck_assert_int_eq(digest_feed(d, *parts, strlen(*parts)), 0);
        ck_assert_int_eq(digest_end(d, out), 0);
}

START_TEST(test_digest) {
        uint8_t a[DIGEST_LEN], b[DIGEST_LEN], c[DIGEST_LEN], e[DIGEST_LEN];

        digest_of(key1, (const char *[]){ "hello world", NULL }, a);
        digest_of(key1, (const char *[]){ "hello", " ", "world", NULL }, b);
        ck_assert_mem_eq(a, b, DIGEST_LEN); /* however the bytes arrive */
        digest_of(key2, (const char *[]){ "hello world", NULL }, c);
        ck_assert(memcmp(a, c, DIGEST_LEN) != 0); /* the key is part of it */
        digest_of(key1, (const char *[]){ "hello worle", NULL }, c);
        ck_assert(memcmp(a, c, DIGEST_LEN) != 0);
        digest_of(key1, (const char *[]){ NULL }, e);
        ck_assert(memcmp(a, e, DIGEST_LEN) != 0);
        /* a context is reused for the next digest, as for each page */
        {
                _cleanup_(digest_freep) Digest *d = NULL;

                ck_assert_int_eq(digest_new(key1, &d), 0);
                for (int i = 0; i < 2; i++) {
                        ck_assert_int_eq(digest_begin(d), 0);
                        ck_assert_int_eq(digest_feed(d, "hello world", 11), 0);
                        ck_assert_int_eq(digest_end(d, b), 0);
                        ck_assert_mem_eq(a, b, DIGEST_LEN);
                }
        }
}
END_TEST

typedef struct Fixture {
        char dir[64];
        NsscacheConf *conf;
        CacheOptions opts;
} Fixture;

static void write_file(const char *dir, const char *name, const char *text) {
        _cleanup_free_ char *path = NULL;
        FILE *f;

        ck_assert_int_ge(asprintf(&path, "%s/%s", dir, name), 0);
        f = fopen(path, "we");
        ck_assert_ptr_nonnull(f);
        ck_assert_int_ge(fputs(text, f), 0);
        ck_assert_int_eq(fclose(f), 0);
}

static void fixture_init(Fixture *x) {
        strcpy(x->dir, "/tmp/test-refresh-memo.XXXXXX");
        ck_assert_ptr_nonnull(mkdtemp(x->dir));
        ck_assert_int_eq(nsscache_conf_new(&x->conf), 0);
        free(x->conf->local_passwd);
        free(x->conf->local_group);
        ck_assert_int_ge(asprintf(&x->conf->local_passwd, "%s/passwd", x->dir), 0);
        ck_assert_int_ge(asprintf(&x->conf->local_group, "%s/group", x->dir), 0);
        write_file(x->dir, "passwd", "root:x:0:0::/root:/bin/sh\n");
        write_file(x->dir, "group", "root:x:0:\n");
        cache_options_init(&x->opts);
        x->opts.dir = x->dir;
        x->opts.compat_dir = x->dir;
        write_file(x->dir, "passwd.cache", "ada:x:1:1::/home/ada:/bin/sh\n");
        write_file(x->dir, "passwd.cache.ixname", "ada 0\n");
}

static void fixture_done(Fixture *x) {
        _cleanup_free_ char *cmd = NULL;

        nsscache_conf_free(x->conf);
        ck_assert_int_ge(asprintf(&cmd, "rm -rf '%s'", x->dir), 0);
        ck_assert_int_eq(system(cmd), 0);
}

static void files(const Fixture *x, bool contents, uint8_t out[DIGEST_LEN]) {
        ck_assert_int_eq(refresh_files_digest(x->conf, &x->opts, key1, contents, out), 0);
}

/* Both digests of @x now, and whether each differs from @stat0 / @cont0. */
static void changed(const Fixture *x, const uint8_t *stat0, const uint8_t *cont0, bool *ret_stat,
                    bool *ret_cont) {
        uint8_t s[DIGEST_LEN], c[DIGEST_LEN];

        files(x, false, s);
        files(x, true, c);
        *ret_stat = memcmp(s, stat0, DIGEST_LEN) != 0;
        *ret_cont = memcmp(c, cont0, DIGEST_LEN) != 0;
}

START_TEST(test_files_digest) {
        Fixture x;
        uint8_t s0[DIGEST_LEN], c0[DIGEST_LEN], again[DIGEST_LEN];
        _cleanup_free_ char *p = NULL, *fifo = NULL, *compat = NULL;
        struct stat st;
        bool ds, dc;

        fixture_init(&x);
        files(&x, false, s0);
        files(&x, true, c0);
        files(&x, false, again);
        ck_assert_mem_eq(s0, again, DIGEST_LEN);
        files(&x, true, again);
        ck_assert_mem_eq(c0, again, DIGEST_LEN);
        /* another key, another digest */
        ck_assert_int_eq(refresh_files_digest(x.conf, &x.opts, key2, true, again), 0);
        ck_assert(memcmp(c0, again, DIGEST_LEN) != 0);

        /* a published map edited in place, same size, times put back: the
         * contents tell (ctime tells the stat digest) */
        ck_assert_int_ge(asprintf(&p, "%s/passwd.cache", x.dir), 0);
        ck_assert_int_eq(stat(p, &st), 0);
        write_file(x.dir, "passwd.cache", "ada:y:1:1::/home/ada:/bin/sh\n");
        ck_assert_int_eq(utimensat(AT_FDCWD, p, (struct timespec[2]){ st.st_atim, st.st_mtim }, 0), 0);
        changed(&x, s0, c0, &ds, &dc);
        ck_assert(ds);
        ck_assert(dc);
        /* written back as it was: the contents digest is as before, the stat one is not */
        write_file(x.dir, "passwd.cache", "ada:x:1:1::/home/ada:/bin/sh\n");
        changed(&x, s0, c0, &ds, &dc);
        ck_assert(ds);
        ck_assert(!dc);

        /* mode and owner are part of both */
        files(&x, false, s0);
        ck_assert_int_eq(chmod(p, 0600), 0);
        changed(&x, s0, c0, &ds, &dc);
        ck_assert(ds);
        ck_assert(dc);
        ck_assert_int_eq(chmod(p, st.st_mode & 07777), 0);

        /* a missing index is not an empty one */
        files(&x, false, s0);
        files(&x, true, c0);
        write_file(x.dir, "passwd.cache.ixuid", "");
        changed(&x, s0, c0, &ds, &dc);
        ck_assert(ds);
        ck_assert(dc);
        free(p);
        ck_assert_int_ge(asprintf(&p, "%s/passwd.cache.ixuid", x.dir), 0);
        ck_assert_int_eq(unlink(p), 0);
        changed(&x, s0, c0, &ds, &dc);
        ck_assert(!dc);

        /* a local account file counts by its contents */
        write_file(x.dir, "group", "root:x:0:\nada:x:1:\n");
        changed(&x, s0, c0, &ds, &dc);
        ck_assert(dc);
        write_file(x.dir, "group", "root:x:0:\n");

        /* the file permissions are copied from counts by mode, not contents */
        files(&x, false, s0);
        files(&x, true, c0);
        ck_assert_int_ge(asprintf(&compat, "%s/shadow", x.dir), 0);
        write_file(x.dir, "shadow", "root:*:1::::::\n");
        changed(&x, s0, c0, &ds, &dc);
        ck_assert(dc); /* it exists now: copied from */
        files(&x, true, c0);
        write_file(x.dir, "shadow", "root:!:2::::::\n");
        changed(&x, s0, c0, &ds, &dc);
        ck_assert(!dc);
        ck_assert_int_eq(chmod(compat, 0640), 0);
        changed(&x, s0, c0, &ds, &dc);
        ck_assert(dc);

        /* a FIFO in a map's place is read without waiting for a writer */
        ck_assert_int_ge(asprintf(&fifo, "%s/group.cache", x.dir), 0);
        ck_assert_int_eq(mkfifo(fifo, 0600), 0);
        files(&x, true, again);
        ck_assert(memcmp(again, c0, DIGEST_LEN) != 0);
        /* and is not taken for a directory there: the type counts */
        ck_assert_int_eq(unlink(fifo), 0);
        ck_assert_int_eq(mkdir(fifo, 0600), 0);
        files(&x, true, s0);
        ck_assert(memcmp(again, s0, DIGEST_LEN) != 0);
        ck_assert_int_eq(rmdir(fifo), 0);
        fixture_done(&x);
}
END_TEST

START_TEST(test_rejects_copy) {
        MapReject records[] = {
                { .reason = MAP_REJECT_LOCAL_ACCOUNT,
                  .map = NSS_MAP_PASSWD,
                  .name = (char *) "root",
                  .id = 0 },
                { .reason = MAP_REJECT_DUP_NAME, .map = NSS_MAP_GROUP, .name = NULL, .id = -1 },
        };
        MapRejects from = { .total = 7, .records = records, .n_records = 2 }, to, empty;

        from.count[MAP_REJECT_LOCAL_ACCOUNT] = 5;
        from.count[MAP_REJECT_DUP_NAME] = 2;
        ck_assert_int_eq(refresh_rejects_copy(&to, &from), 0);
        ck_assert_uint_eq(to.total, 7);
        ck_assert_mem_eq(to.count, from.count, sizeof(from.count));
        ck_assert_uint_eq(to.n_records, 2);
        ck_assert_ptr_ne(to.records[0].name, records[0].name); /* its own copy */
        ck_assert_str_eq(to.records[0].name, "root");
        ck_assert_ptr_null(to.records[1].name);
        ck_assert_int_eq(to.records[1].id, -1);
        refresh_rejects_done(&to);
        ck_assert_ptr_null(to.records);
        ck_assert_uint_eq(to.n_records, 0);

        ck_assert_int_eq(refresh_rejects_copy(&empty, &(MapRejects){}), 0);
        ck_assert_ptr_null(empty.records);
        refresh_rejects_done(&empty);
}
END_TEST

START_TEST(test_record) {
        FetchRecord a, b;
        uint8_t d[DIGEST_LEN] = { 9 };

        fetch_record_init(&a);
        fetch_record_init(&b);
        ck_assert(memcmp(a.key, b.key, DIGEST_KEY_LEN) != 0); /* each run draws its own */
        for (int i = 0; i < 1000; i++)
                ck_assert_int_eq(
                        fetch_record_add(&a, "http://x/Users?startIndex=1", "Users page 1", 200, true, d),
                        0);
        ck_assert_uint_eq(a.n, 1000);
        ck_assert_str_eq(a.requests[999].what, "Users page 1");
        ck_assert_int_eq(a.requests[999].status, 200);
        ck_assert(a.requests[999].listing);
        ck_assert_mem_eq(a.requests[999].digest, d, DIGEST_LEN);
        fetch_record_done(&a);
        ck_assert_uint_eq(a.n, 0);
        ck_assert_ptr_null(a.requests);
        fetch_record_done(&b);
}
END_TEST

/* A server handing out kilobyte cursors a resource at a time cannot make
 * the memo hold more than FETCH_RECORD_BYTES_MAX between runs. */
START_TEST(test_record_cap) {
        _cleanup_free_ char *url = malloc(4097);
        uint8_t d[DIGEST_LEN] = { 1 };
        FetchRecord r;
        size_t added = 0;

        ck_assert_ptr_nonnull(url);
        memset(url, 'c', 4096);
        url[4096] = 0;
        fetch_record_init(&r);
        while (!r.broken) {
                ck_assert_int_eq(fetch_record_add(&r, url, "Users page by cursor", 200, true, d), 0);
                added++;
                ck_assert_uint_le(r.bytes, FETCH_RECORD_BYTES_MAX);
                ck_assert_uint_lt(added, FETCH_RECORD_BYTES_MAX / 4096 + 2);
        }
        ck_assert_uint_ge(added, FETCH_RECORD_BYTES_MAX / (4096 + 128));
        ck_assert_uint_eq(r.n, 0); /* what it held is given back at once */
        ck_assert_ptr_null(r.requests);
        ck_assert_int_eq(fetch_record_add(&r, "u", "w", 200, true, d), 0);
        ck_assert_uint_eq(r.n, 0); /* and it stays broken */
        fetch_record_done(&r);
}
END_TEST

static Suite *suite(void) {
        Suite *s = suite_create("refresh-memo");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_digest);
        tcase_add_test(tc, test_files_digest);
        tcase_add_test(tc, test_rejects_copy);
        tcase_add_test(tc, test_record);
        tcase_add_test(tc, test_record_cap);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return check_run(suite());
}
