/* The publish journal.
 *
 * A publish stages every file it will put in place (data and indexes, each
 * fsync'ed), then writes this journal to the module's state directory and
 * fsyncs it, and only then renames.  A crash before the journal is durable
 * leaves the old caches and some staged files (removed before the next
 * publish); a crash after it is finished at the next start by applying the
 * journal again: every step is idempotent, keyed on whether the staged file
 * still exists.  So libnss-cache never sees, past a restart, passwd from one
 * run and group from another.
 *
 * Format, one item a line, names last so they may hold spaces:
 *   sunkd-publish-journal 1
 *   dir /etc
 *   data .sunkd-passwd.cache.a1B2c3
 *   index .sunkd-passwd.cache.ixname.d4E5f6
 *   drop passwd.cache.ixuid
 *   end
 * Names are relative to dir and hold neither '/' nor a newline.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/fileio.h"
#include "util/macro.h"

#include "cache-journal.h"

#define JOURNAL_MAGIC "sunkd-publish-journal 1"
#define JOURNAL_SIZE_MAX (64 * 1024)

int (*cache_publish_test_hook)(const char *step, const char *path) = NULL;

static const char *const kind_table[_CACHE_JOURNAL_KIND_MAX] = {
        [CACHE_JOURNAL_DATA] = "data",
        [CACHE_JOURNAL_INDEX] = "index",
        [CACHE_JOURNAL_DROP] = "drop",
};

int cache_journal_step(const char *step, const char *path) {
        return cache_publish_test_hook ? cache_publish_test_hook(step, path) : 0;
}

void cache_journal_done(CacheJournal *j) {
        free(j->dir);
        for (size_t i = 0; i < j->n; i++)
                free(j->entry[i].name);
        *j = (CacheJournal){};
}

static bool name_ok(const char *name) {
        return !isempty(name) && !strchr(name, '/') && !strchr(name, '\n') && strcmp(name, ".") != 0 &&
               strcmp(name, "..") != 0;
}

int cache_journal_add(CacheJournal *j, CacheJournalKind kind, const char *name) {
        if (j->n >= CACHE_JOURNAL_MAX)
                return -E2BIG;
        if ((unsigned) kind >= _CACHE_JOURNAL_KIND_MAX || !name_ok(name) ||
            (kind != CACHE_JOURNAL_DROP && !cache_journal_is_staged(name)) ||
            (kind != CACHE_JOURNAL_DATA && j->n == 0))
                return -EINVAL;
        j->entry[j->n].name = strdup(name);
        if (!j->entry[j->n].name)
                return -ENOMEM;
        j->entry[j->n++].kind = kind;
        return 0;
}

bool cache_journal_is_staged(const char *name) {
        size_t pl = strlen(CACHE_JOURNAL_TMP_PREFIX), n = strlen(name);

        /* prefix, at least one character of target, '.', the random part */
        return n >= pl + 2 + CACHE_JOURNAL_TMP_RANDOM && strncmp(name, CACHE_JOURNAL_TMP_PREFIX, pl) == 0 &&
               name[n - CACHE_JOURNAL_TMP_RANDOM - 1] == '.' && !strchr(name, '/');
}

int cache_journal_target(const char *staged, char **ret) {
        size_t pl = strlen(CACHE_JOURNAL_TMP_PREFIX);
        char *t;

        if (!cache_journal_is_staged(staged))
                return -EINVAL;
        t = strndup(staged + pl, strlen(staged) - pl - CACHE_JOURNAL_TMP_RANDOM - 1);
        if (!t)
                return -ENOMEM;
        *ret = t;
        return 0;
}

static int journal_format(const CacheJournal *j, char **ret, size_t *ret_len) {
        _cleanup_free_ char *buf = NULL;
        size_t len = 0;
        FILE *f;

        f = open_memstream(&buf, &len);
        if (!f)
                return -ENOMEM;
        fprintf(f, "%s\ndir %s\n", JOURNAL_MAGIC, j->dir);
        for (size_t i = 0; i < j->n; i++)
                fprintf(f, "%s %s\n", kind_table[j->entry[i].kind], j->entry[i].name);
        fputs("end\n", f);
        if (fclose(f) != 0 || !buf)
                return -ENOMEM;
        *ret = TAKE_PTR(buf);
        *ret_len = len;
        return 0;
}

int cache_journal_write(const CacheJournal *j, const char *path) {
        _cleanup_free_ char *text = NULL;
        size_t len;
        int r;

        if (isempty(j->dir) || strchr(j->dir, '\n') || j->n == 0)
                return -EINVAL;
        r = journal_format(j, &text, &len);
        if (r < 0)
                return r;
        r = cache_journal_step("journal", path);
        if (r < 0)
                return r;
        return fileio_write_atomic(path, text, len, 0600, (uid_t) -1, (gid_t) -1);
}

static int parse_entry(CacheJournal *j, const char *line) {
        for (CacheJournalKind k = 0; k < _CACHE_JOURNAL_KIND_MAX; k++) {
                size_t kl = strlen(kind_table[k]);

                if (strncmp(line, kind_table[k], kl) == 0 && line[kl] == ' ')
                        return cache_journal_add(j, k, line + kl + 1) == -ENOMEM ? -ENOMEM : 0;
        }
        return -EBADMSG;
}

static int journal_parse(char *text, CacheJournal *j) {
        char *save = NULL, *line;
        bool ended = false;
        int r;

        line = strtok_r(text, "\n", &save);
        if (!line || strcmp(line, JOURNAL_MAGIC) != 0)
                return -EBADMSG;
        line = strtok_r(NULL, "\n", &save);
        if (!line || strncmp(line, "dir /", 5) != 0)
                return -EBADMSG;
        j->dir = strdup(line + 4);
        if (!j->dir)
                return -ENOMEM;
        while ((line = strtok_r(NULL, "\n", &save))) {
                if (ended)
                        return -EBADMSG;
                if (strcmp(line, "end") == 0) {
                        ended = true;
                        continue;
                }
                size_t before = j->n;
                r = parse_entry(j, line);
                if (r < 0)
                        return r;
                if (j->n == before)
                        return -EBADMSG; /* a name cache_journal_add() refused */
        }
        return ended && j->n > 0 ? 0 : -EBADMSG;
}

int cache_journal_read(const char *path, CacheJournal *ret) {
        _cleanup_free_ char *text = NULL;
        CacheJournal j = {};
        size_t len;
        int r;

        r = fileio_read(path, JOURNAL_SIZE_MAX, &text, &len);
        if (r < 0)
                return r;
        if (memchr(text, '\0', len))
                return -EBADMSG;
        r = journal_parse(text, &j);
        if (r < 0) {
                cache_journal_done(&j);
                return r;
        }
        *ret = j;
        return 0;
}

typedef struct Step {
        const char *step;
        const char *from; /* NULL: unlink `to` */
        const char *to;
} Step;

static int step_run(const Step *s, char **ret_error) {
        int r;

        r = cache_journal_step(s->step, s->from ?: s->to);
        if (r >= 0 && s->from)
                r = RET_NERRNO(rename(s->from, s->to));
        else if (r >= 0 && unlink(s->to) < 0 && errno != ENOENT)
                r = negative_errno();
        if (r < 0 && ret_error &&
            asprintf(ret_error, "%s: %s failed: %s", s->from ?: s->to, s->step, strerror(-r)) < 0)
                *ret_error = NULL;
        return r;
}

typedef struct Paths {
        char *staged[CACHE_JOURNAL_MAX]; /* NULL for DROP */
        char *target[CACHE_JOURNAL_MAX];
} Paths;

static void paths_done(Paths *p, size_t n) {
        for (size_t i = 0; i < n; i++) {
                free(p->staged[i]);
                free(p->target[i]);
        }
}

static int paths_fill(const CacheJournal *j, Paths *p) {
        for (size_t i = 0; i < j->n; i++) {
                const CacheJournalEntry *e = j->entry + i;
                _cleanup_free_ char *target = NULL;

                if (e->kind != CACHE_JOURNAL_DROP) {
                        int r = cache_journal_target(e->name, &target);
                        if (r < 0)
                                return r;
                        if (asprintf(&p->staged[i], "%s/%s", j->dir, e->name) < 0)
                                return -ENOMEM;
                }
                if (asprintf(&p->target[i], "%s/%s", j->dir, target ?: e->name) < 0)
                        return -ENOMEM;
        }
        return 0;
}

/* One map: entries [first, end) of @j, the first being its data. */
/* A lookup that opened an old index before we unlinked it reads the data
 * file a few microseconds later: give such lookups this long to end before
 * the data under them changes.  libnss-cache's mtime check catches a reader
 * that looks at the data after the rename; this covers one that looked
 * before and opens it after, which would otherwise seek past the end of a
 * shorter new file into a status glibc aborts on. */
#define INDEX_DRAIN_USEC (50 * 1000)

/* Phase one: unlink the old indexes of a map whose data is staged.  Returns
 * 1 when an index was there, so lookups may still be using it. */
static int unlink_indexes(const Paths *p, size_t first, size_t end, char **ret_error) {
        bool had = false;
        int r;

        if (access(p->staged[first], F_OK) < 0)
                return 0;
        for (size_t i = first + 1; i < end; i++) {
                had = had || access(p->target[i], F_OK) >= 0;
                r = step_run(&(Step){ "unlink-index", NULL, p->target[i] }, ret_error);
                if (r < 0)
                        return r;
        }
        return had;
}

/* Phase two: the data, then the new indexes. */
static int rename_map(const CacheJournal *j, const Paths *p, size_t first, size_t end, char **ret_error) {
        int r;

        if (access(p->staged[first], F_OK) >= 0) {
                r = step_run(&(Step){ "rename-data", p->staged[first], p->target[first] }, ret_error);
                if (r < 0)
                        return r;
        }
        for (size_t i = first + 1; i < end; i++) {
                const CacheJournalEntry *e = j->entry + i;

                if (e->kind == CACHE_JOURNAL_DROP)
                        r = step_run(&(Step){ "drop-index", NULL, p->target[i] }, ret_error);
                else if (access(p->staged[i], F_OK) >= 0)
                        r = step_run(&(Step){ "rename-index", p->staged[i], p->target[i] }, ret_error);
                else
                        r = 0;
                if (r < 0)
                        return r;
        }
        return 0;
}

static size_t map_end(const CacheJournal *j, size_t first) {
        size_t end = first + 1;

        while (end < j->n && j->entry[end].kind != CACHE_JOURNAL_DATA)
                end++;
        return end;
}

int cache_journal_apply(const CacheJournal *j, char **ret_error) {
        Paths p = {};
        int r;

        bool drain = false;

        r = paths_fill(j, &p);
        for (size_t first = 0; r >= 0 && first < j->n; first = map_end(j, first)) {
                r = unlink_indexes(&p, first, map_end(j, first), ret_error);
                drain = drain || r > 0;
        }
        if (r >= 0 && drain)
                (void) nanosleep(&(struct timespec){ 0, INDEX_DRAIN_USEC * 1000 }, NULL);
        for (size_t first = 0; r >= 0 && first < j->n; first = map_end(j, first))
                r = rename_map(j, &p, first, map_end(j, first), ret_error);
        if (r >= 0 && j->n > 0) {
                r = fileio_fsync_dir(p.target[0]);
                if (r < 0 && ret_error &&
                    asprintf(ret_error, "%s: fsync failed: %s", j->dir, strerror(-r)) < 0)
                        *ret_error = NULL;
        }
        paths_done(&p, j->n);
        return r;
}
