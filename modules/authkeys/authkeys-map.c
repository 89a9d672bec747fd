/* An nsscache sshkey cache as an immutable map: user -> valid key lines.
 *
 * Layout, for 100k users with two keys in well under 30 MB: the names and
 * the kept key lines are copied once into one text arena; users and keys
 * are arrays of 32-bit offsets into it; the index is an open-addressing
 * table of user numbers hashed with SipHash-1-3 under a random key, so that
 * names chosen to collide cannot make a build quadratic.
 *
 * repr() of a str, which the list form holds (see
 * modules/nsscache/cache/cache-format.c): quoted with ' or ", with \\, \', \",
 * \t, \n, \r, \xhh, \uhhhh and \Uhhhhhhhh escapes and any other byte as it
 * is.  Other escapes are not written by repr() and make the line bad.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/macro.h"
#include "modutil/py-escape.h"
#include "util/rand-util.h"
#include "util/siphash.h"
#include "util/strbuf.h"

#include "authkeys-map.h"

#define READ_CHUNK (256U * 1024U)
#define PREFAULT_STEP (2U * 1024U * 1024U)

const AuthkeysMapLimits authkeys_map_default_limits = {
        .max_line = AUTHKEYS_MAP_LINE_MAX,
        .max_keys_per_user = AUTHKEYS_MAP_KEYS_PER_USER_MAX,
        .max_users = AUTHKEYS_MAP_USERS_MAX,
        .max_file_size = AUTHKEYS_MAP_FILE_SIZE_MAX,
};

static const char *const line_error_names[_AUTHKEYS_LINE_MAX] = {
        [AUTHKEYS_LINE_OK] = "ok",
        [AUTHKEYS_LINE_NO_COLON] = "no-colon",
        [AUTHKEYS_LINE_BAD_NAME] = "bad-name",
        [AUTHKEYS_LINE_BAD_LIST] = "bad-list",
        [AUTHKEYS_LINE_TOO_LONG] = "too-long",
        [AUTHKEYS_LINE_DUPLICATE] = "duplicate",
        [AUTHKEYS_LINE_LOCAL_ACCOUNT] = "local-account",
};

const char *authkeys_line_error_to_string(AuthkeysLineError e) {
        if ((unsigned) e >= _AUTHKEYS_LINE_MAX)
                return NULL;
        return line_error_names[e];
}

typedef struct User {
        uint32_t name_off, name_len;
        uint32_t first_key, n_keys;
} User;

/* The name's hash places the slot and, kept there, spares most name
 * comparisons and all hashing when the table grows. */
typedef struct Slot {
        uint32_t user; /* user number + 1; 0: free */
        uint32_t hash;
} Slot;

typedef struct KeyRef {
        uint32_t off, len;
} KeyRef;

struct AuthkeysMap {
        StrBuf text;
        User *users;
        size_t n_users, cap_users;
        KeyRef *keys;
        size_t n_keys, cap_keys;
        Slot *table;
        size_t table_size; /* a power of two, at least twice n_users */
        uint64_t k0, k1;
        AuthkeysMapStats stats;
};

/* One decoded string of a list line: in the line itself if it had no
 * escapes, else in the builder's scratch buffer. */
typedef struct Span {
        const char *p;
        size_t len;
} Span;

typedef struct Builder {
        AuthkeysMap *map;
        AuthkeysMapLimits limits;
        AuthkeysDropFn drop;
        void *userdata;
        char *carry; /* a line split across reads; limits.max_line bytes */
        size_t carry_len;
        bool skipping; /* inside an over-long line */
        uint64_t total;
        char *scratch; /* decoded list strings; limits.max_line bytes */
        Span *spans;
        size_t cap_spans;
        size_t prefaulted; /* the arena's bytes faulted in ahead of the copies */
        char name[AUTHKEYS_MAP_NAME_MAX + 1];
} Builder;

AuthkeysMap *authkeys_map_free(AuthkeysMap *m) {
        if (!m)
                return NULL;
        strbuf_done(&m->text);
        free(m->users);
        free(m->keys);
        free(m->table);
        return mfree(m);
}

const AuthkeysMapStats *authkeys_map_stats(const AuthkeysMap *m) {
        return &m->stats;
}

static bool grow(void **p, size_t *cap, size_t need, size_t size) {
        size_t n;
        void *q;

        if (need <= *cap)
                return true;
        n = MAX(need, *cap ? *cap * 2 : 64);
        q = reallocarray(*p, n, size);
        if (!q)
                return false;
        *p = q;
        *cap = n;
        return true;
}

/* Faults in the pages of a fresh buffer in one call: taking them one by one
 * as the copies reach them costs more than the parsing, on a VM above all.
 * Only a hint; a kernel without MADV_POPULATE_WRITE (5.14) faults as usual. */
static void prefault(void *p, size_t n) {
        uintptr_t page = (uintptr_t) sysconf(_SC_PAGESIZE), a = ((uintptr_t) p + page - 1) & ~(page - 1),
                  e = ((uintptr_t) p + n) & ~(page - 1);

        if (e > a)
                (void) madvise((void *) a, e - a, MADV_POPULATE_WRITE);
}

/* Copies into the arena, faulting it in a step ahead of the copies: never
 * more than what is kept, which for a hostile file is far less than its size. */
static void arena_append(Builder *b, const char *p, size_t n) {
        StrBuf *t = &b->map->text;

        if (t->len + n >= b->prefaulted && b->prefaulted < t->cap) {
                size_t step = MAX((size_t) PREFAULT_STEP, n);

                step = MIN(step, t->cap - b->prefaulted);
                prefault(t->data + b->prefaulted, step);
                b->prefaulted += step;
        }
        strbuf_append(t, p, n);
}

static uint32_t name_hash(const AuthkeysMap *m, const char *name, size_t len) {
        uint64_t h = siphash13(m->k0, m->k1, (const unsigned char *) name, len);

        return (uint32_t) (h ^ (h >> 32));
}

/* The slot that holds @name (hashed to @h), or the free slot where it would go. */
static size_t table_slot(const AuthkeysMap *m, const char *name, size_t len, uint32_t h) {
        size_t mask = m->table_size - 1, i = h & mask;

        for (;; i = (i + 1) & mask) {
                const Slot *t = &m->table[i];
                const User *e;

                if (t->user == 0)
                        return i;
                if (t->hash != h)
                        continue;
                e = &m->users[t->user - 1];
                if (e->name_len == len && memcmp(m->text.data + e->name_off, name, len) == 0)
                        return i;
        }
}

static int table_grow(AuthkeysMap *m) {
        size_t size = m->table_size ? m->table_size * 2 : 1024, mask = size - 1;
        _cleanup_free_ Slot *old = m->table;
        size_t old_size = m->table_size;

        m->table = calloc(size, sizeof(Slot));
        if (!m->table) {
                m->table = TAKE_PTR(old);
                return -ENOMEM;
        }
        m->table_size = size;
        /* Names are distinct: a rehash only needs a free slot. */
        for (size_t j = 0; j < old_size; j++) {
                size_t i;

                if (old[j].user == 0)
                        continue;
                for (i = old[j].hash & mask; m->table[i].user != 0; i = (i + 1) & mask)
                        ;
                m->table[i] = old[j];
        }
        return 0;
}

static void report(Builder *b, const char *user, AuthkeysLineError le, AuthkeysReject rj, size_t key_index) {
        AuthkeysDrop d = {
                .line_no = b->map->stats.lines,
                .user = user,
                .line_error = le,
                .reject = rj,
                .key_index = key_index,
        };

        if (le != AUTHKEYS_LINE_OK)
                b->map->stats.bad_lines[le]++;
        else
                b->map->stats.invalid_keys[rj]++;
        if (b->drop)
                b->drop(&d, b->userdata);
}

/* One escape at s[*i] (past the backslash) onto out; the output is never longer than the input. */
static int unescape(const char *s, size_t len, size_t *i, char *out, size_t *o) {
        uint32_t cp;
        size_t n;
        int r = py_escape_decode(s + *i, len - *i, &cp, &n);

        if (r < 0)
                return r;
        *i += n;
        *o += utf8_encode(cp, out + *o);
        return 0;
}

/* One quoted string at s[*i]; only one with escapes is copied, into the scratch buffer. */
static int list_string(Builder *b, const char *s, size_t len, size_t *i, size_t *o, Span *ret) {
        char quote = s[*i];
        size_t start = *o, j;

        if (quote != '\'' && quote != '"')
                return -EINVAL;
        for (j = *i + 1; j < len && s[j] != quote && s[j] != '\\'; j++)
                ;
        if (j < len && s[j] == quote) {
                *ret = (Span){ s + *i + 1, j - *i - 1 };
                *i = j + 1;
                return 0;
        }
        for ((*i)++; *i < len;) {
                char c = s[(*i)++];

                if (c == quote) {
                        *ret = (Span){ b->scratch + start, *o - start };
                        return 0;
                }
                if (c != '\\')
                        b->scratch[(*o)++] = c;
                else if (*i >= len || unescape(s, len, i, b->scratch, o) < 0)
                        return -EINVAL;
        }
        return -EINVAL;
}

/* `['k1', 'k2']` as Python's literal_eval reads it: blanks around items, a trailing comma. */
static int list_parse(Builder *b, const char *s, size_t len, size_t *ret_n) {
        size_t i = authkeys_skip_blanks(s, len, 1), o = 0, n = 0;

        while (i < len && s[i] != ']') {
                if (!grow((void **) &b->spans, &b->cap_spans, n + 1, sizeof(Span)))
                        return -ENOMEM;
                if (list_string(b, s, len, &i, &o, &b->spans[n]) < 0)
                        return -EINVAL;
                n++;
                i = authkeys_skip_blanks(s, len, i);
                if (i < len && s[i] == ',')
                        i = authkeys_skip_blanks(s, len, i + 1);
                else if (i >= len || s[i] != ']')
                        return -EINVAL;
        }
        if (i >= len || authkeys_skip_blanks(s, len, i + 1) != len)
                return -EINVAL;
        *ret_n = n;
        return 0;
}

static int add_key(Builder *b, User *u, const char *key, size_t len, size_t index) {
        AuthkeysMap *m = b->map;
        AuthkeysKey k;
        AuthkeysReject rj = authkeys_key_parse(key, len, &k);

        if (rj == AUTHKEYS_OK && u->n_keys >= b->limits.max_keys_per_user)
                rj = AUTHKEYS_REJECT_TOO_MANY;
        if (rj != AUTHKEYS_OK) {
                report(b, b->name, AUTHKEYS_LINE_OK, rj, index);
                return 0;
        }
        if (!grow((void **) &m->keys, &m->cap_keys, m->n_keys + 1, sizeof(KeyRef)))
                return -ENOMEM;
        m->keys[m->n_keys++] = (KeyRef){ (uint32_t) m->text.len, (uint32_t) len };
        arena_append(b, key, len);
        if (m->text.oom)
                return -ENOMEM;
        /* served as a JSON string: a comment's stray bytes become '?' */
        if (k.comment_not_utf8)
                authkeys_key_clean_comment(m->text.data + m->text.len - len, &k);
        u->n_keys++;
        return 0;
}

/* The @n keys list_parse() left in spans, or the one key line @rest. */
static int add_keys(Builder *b, User *u, const char *rest, size_t rest_len, size_t n) {
        int r = 0;

        if (rest_len > 0 && rest[0] == '[')
                for (size_t i = 0; i < n && r >= 0; i++)
                        r = add_key(b, u, b->spans[i].p, b->spans[i].len, i);
        else if (rest_len > 0)
                r = add_key(b, u, rest, rest_len, 0);
        return r;
}

static bool name_valid(const char *s, size_t len) {
        if (len == 0 || len > AUTHKEYS_MAP_NAME_MAX)
                return false;
        for (size_t i = 0; i < len; i++)
                if ((unsigned char) s[i] <= ' ' || s[i] == 0x7F)
                        return false;
        return true;
}

static int add_user(Builder *b, const char *name, size_t name_len, uint32_t h, User *u) {
        AuthkeysMap *m = b->map;
        size_t slot;
        int r;

        if (m->n_users >= b->limits.max_users)
                return -E2BIG;
        if ((m->n_users + 1) * 2 > m->table_size) {
                r = table_grow(m);
                if (r < 0)
                        return r;
        }
        if (!grow((void **) &m->users, &m->cap_users, m->n_users + 1, sizeof(User)))
                return -ENOMEM;
        u->name_off = (uint32_t) m->text.len;
        u->name_len = (uint32_t) name_len;
        arena_append(b, name, name_len);
        if (m->text.oom)
                return -ENOMEM;
        slot = table_slot(m, name, name_len, h);
        m->users[m->n_users] = *u;
        m->table[slot] = (Slot){ (uint32_t) ++m->n_users, h };
        m->stats.users++;
        m->stats.keys += u->n_keys;
        return 0;
}

static int builder_line(Builder *b, const char *s, size_t len) {
        AuthkeysMap *m = b->map;
        const char *colon, *rest;
        size_t rest_len, n = 0;
        User u = {};
        uint32_t h;
        int r;

        m->stats.lines++;
        if (len > 0 && s[len - 1] == '\r')
                len--;
        if (len == 0)
                return 0;
        if (len > b->limits.max_line) {
                report(b, NULL, AUTHKEYS_LINE_TOO_LONG, AUTHKEYS_OK, 0);
                return 0;
        }
        colon = memchr(s, ':', len);
        if (!colon) {
                report(b, NULL, AUTHKEYS_LINE_NO_COLON, AUTHKEYS_OK, 0);
                return 0;
        }
        if (!name_valid(s, (size_t) (colon - s))) {
                report(b, NULL, AUTHKEYS_LINE_BAD_NAME, AUTHKEYS_OK, 0);
                return 0;
        }
        memcpy(b->name, s, (size_t) (colon - s));
        b->name[colon - s] = 0;
        h = name_hash(m, s, (size_t) (colon - s));
        if (m->table_size > 0 && m->table[table_slot(m, s, (size_t) (colon - s), h)].user != 0) {
                report(b, b->name, AUTHKEYS_LINE_DUPLICATE, AUTHKEYS_OK, 0);
                return 0;
        }

        rest = colon + 1;
        rest_len = len - (size_t) (colon - s) - 1;
        u.first_key = (uint32_t) m->n_keys;
        if (rest_len > 0 && rest[0] == '[') {
                r = list_parse(b, rest, rest_len, &n);
                if (r == -EINVAL) {
                        report(b, b->name, AUTHKEYS_LINE_BAD_LIST, AUTHKEYS_OK, 0);
                        return 0;
                }
                if (r < 0)
                        return r;
        }
        /* Only a line read whole: a cut-off one stays bad-list, which a caller checks for. */
        if (b->limits.local && authkeys_local_name(b->limits.local, s, (size_t) (colon - s))) {
                report(b, b->name, AUTHKEYS_LINE_LOCAL_ACCOUNT, AUTHKEYS_OK, 0);
                return 0;
        }
        r = add_keys(b, &u, rest, rest_len, n);
        if (r < 0)
                return r;
        return add_user(b, s, (size_t) (colon - s), h, &u);
}

/* @n more bytes of the file: whole lines are taken where they lie, a split one through carry. */
static int builder_feed(Builder *b, const char *p, size_t n) {
        int r = 0;

        b->total += n;
        if (b->total > b->limits.max_file_size)
                return -EFBIG;
        while (n > 0 && r >= 0) {
                const char *nl = memchr(p, '\n', n);
                size_t seg = nl ? (size_t) (nl - p) : n;

                if (b->skipping)
                        b->skipping = !nl;
                else if (b->carry_len + seg > b->limits.max_line) {
                        b->map->stats.lines++;
                        report(b, NULL, AUTHKEYS_LINE_TOO_LONG, AUTHKEYS_OK, 0);
                        b->carry_len = 0;
                        b->skipping = !nl;
                } else if (nl && b->carry_len == 0)
                        r = builder_line(b, p, seg);
                else {
                        memcpy(b->carry + b->carry_len, p, seg);
                        b->carry_len += seg;
                        if (nl) {
                                r = builder_line(b, b->carry, b->carry_len);
                                b->carry_len = 0;
                        }
                }
                seg += nl ? 1 : 0;
                p += seg;
                n -= seg;
        }
        return r;
}

static int builder_finish(Builder *b, AuthkeysMap **ret) {
        AuthkeysMap *m = b->map;
        int r = 0;

        if (b->carry_len > 0)
                r = builder_line(b, b->carry, b->carry_len);
        if (r < 0)
                return r;
        if (m->table_size == 0) {
                r = table_grow(m);
                if (r < 0)
                        return r;
        }
        /* Give back the arena's slack: the map lives until the next reload. */
        if (m->text.data && m->text.cap > m->text.len + 1) {
                char *d = realloc(m->text.data, m->text.len + 1);
                if (d) {
                        m->text.data = d;
                        m->text.cap = m->text.len + 1;
                }
        }
        *ret = TAKE_PTR(b->map);
        return 0;
}

static void builder_done(Builder *b) {
        authkeys_map_free(b->map);
        free(b->carry);
        free(b->scratch);
        free(b->spans);
}

/* @size_hint: the file's size if known, else 0; what the map keeps is never more than the file. */
static int builder_init(Builder *b, const AuthkeysMapLimits *limits, AuthkeysDropFn drop, void *userdata,
                        uint64_t size_hint) {
        *b = (Builder){
                .limits = limits ? *limits : authkeys_map_default_limits,
                .drop = drop,
                .userdata = userdata,
        };
        /* Offsets are 32 bits: no file may be larger than that. */
        b->limits.max_file_size = MIN(b->limits.max_file_size, (uint64_t) UINT32_MAX);
        b->limits.max_line = MAX(b->limits.max_line, (size_t) 1);
        b->map = calloc(1, sizeof(AuthkeysMap));
        b->carry = malloc(b->limits.max_line);
        b->scratch = malloc(b->limits.max_line);
        if (!b->map || !b->carry || !b->scratch)
                return -ENOMEM;
        /* One arena of the right size up front: growing it by copies costs more than the parsing. */
        if (size_hint > 0 && size_hint <= b->limits.max_file_size &&
            !strbuf_reserve(&b->map->text, size_hint))
                return -ENOMEM;
        b->map->k0 = random_u64();
        b->map->k1 = random_u64();
        return 0;
}

int authkeys_map_build_mem(const void *data, size_t len, const AuthkeysMapLimits *limits,
                           AuthkeysDropFn drop, void *userdata, AuthkeysMap **ret) {
        _cleanup_(builder_done) Builder b = {};
        int r;

        r = builder_init(&b, limits, drop, userdata, len);
        if (r < 0)
                return r;
        r = builder_feed(&b, data, len);
        if (r < 0)
                return r;
        return builder_finish(&b, ret);
}

int authkeys_map_build_fd(int fd, const AuthkeysMapLimits *limits, AuthkeysDropFn drop, void *userdata,
                          AuthkeysMap **ret) {
        _cleanup_(builder_done) Builder b = {};
        _cleanup_free_ char *buf = NULL;
        struct stat st;
        int r;

        if (fstat(fd, &st) < 0)
                return -errno;
        r = builder_init(&b, limits, drop, userdata, S_ISREG(st.st_mode) ? (uint64_t) st.st_size : 0);
        if (r < 0)
                return r;
        /* Refuse what is already too large before reading any of it. */
        if (S_ISREG(st.st_mode) && (uint64_t) st.st_size > b.limits.max_file_size)
                return -EFBIG;
        buf = malloc(READ_CHUNK);
        if (!buf)
                return -ENOMEM;
        for (;;) {
                ssize_t n = read(fd, buf, READ_CHUNK);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                if (n == 0)
                        break;
                r = builder_feed(&b, buf, (size_t) n);
                if (r < 0)
                        return r;
        }
        return builder_finish(&b, ret);
}

int authkeys_map_build_file(const char *path, const AuthkeysMapLimits *limits, AuthkeysDropFn drop,
                            void *userdata, AuthkeysMap **ret) {
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);

        if (fd < 0)
                return -errno;
        return authkeys_map_build_fd(fd, limits, drop, userdata, ret);
}

int authkeys_map_lookup(const AuthkeysMap *m, const char *user, size_t *ret_n) {
        size_t len = strnlen(user, AUTHKEYS_MAP_NAME_MAX + 1);
        uint32_t u;

        if (len > AUTHKEYS_MAP_NAME_MAX || m->table_size == 0)
                return -ENOENT;
        u = m->table[table_slot(m, user, len, name_hash(m, user, len))].user;
        if (u == 0)
                return -ENOENT;
        *ret_n = m->users[u - 1].n_keys;
        return (int) (u - 1);
}

AuthkeysMapKey authkeys_map_key(const AuthkeysMap *m, int handle, size_t i) {
        const KeyRef *k = &m->keys[m->users[handle].first_key + i];

        return (AuthkeysMapKey){ m->text.data + k->off, k->len };
}

bool authkeys_map_key_matches(AuthkeysMapKey k, const AuthkeysMatch *match) {
        AuthkeysKey parsed;

        if (!match)
                return true;
        return authkeys_key_parse(k.line, k.len, &parsed) == AUTHKEYS_OK &&
               authkeys_key_matches(k.line, &parsed, match);
}
