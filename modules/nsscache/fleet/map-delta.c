/* Map deltas: make by unique-line matching, apply with every removed line checked (map-delta.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "map-delta.h"
#include "util/cleanup.h"
#include "util/errloc.h"
#include "util/strbuf.h"

#define HUNK_MAX 64 /* "@K D A\n" with three 20-digit numbers */

typedef struct Line {
        const char *p;
        size_t len; /* without the newline */
} Line;

typedef struct Lines {
        Line *v;
        size_t n;
} Lines;

static void lines_done(Lines *l) {
        free(l->v);
}

/* @p split at each newline; -EINVAL if the last line has none. */
static int lines_split(const char *p, size_t len, Lines *ret) {
        size_t n = 0, k = 0;
        const char *s = p, *end = p + len;

        if (len > 0 && p[len - 1] != '\n')
                return -EINVAL;
        for (const char *q = p; (q = memchr(q, '\n', (size_t) (end - q))); q++)
                n++;
        ret->v = calloc(n ? n : 1, sizeof(Line));
        if (!ret->v)
                return -ENOMEM;
        for (const char *q; s < end && (q = memchr(s, '\n', (size_t) (end - s))); s = q + 1)
                ret->v[k++] = (Line){ s, (size_t) (q - s) };
        ret->n = n;
        return 0;
}

static bool line_eq(const Line *a, const Line *b) {
        return a->len == b->len && memcmp(a->p, b->p, a->len) == 0;
}

static uint64_t line_hash(const Line *l) {
        uint64_t h = UINT64_C(14695981039346656037);

        for (size_t i = 0; i < l->len; i++)
                h = (h ^ (unsigned char) l->p[i]) * UINT64_C(1099511628211);
        return h;
}

/* A line's occurrences in each map; the index of the last one seen. */
typedef struct Slot {
        const Line *line; /* NULL: empty */
        uint64_t hash;
        uint32_t in_old, in_new;
        size_t old_at;
} Slot;

typedef struct Table {
        Slot *v;
        size_t mask;
} Table;

static Slot *table_slot(Table *t, const Line *l) {
        uint64_t h = line_hash(l);

        for (size_t i = (size_t) h & t->mask;; i = (i + 1) & t->mask) {
                Slot *s = t->v + i;

                if (!s->line) {
                        s->line = l;
                        s->hash = h;
                        return s;
                }
                if (s->hash == h && line_eq(s->line, l))
                        return s;
        }
}

/* match[j]: the old line paired with new line j, or SIZE_MAX; only lines
 * found exactly once on each side are candidates. */
static int pair_unique(const Lines *old, const Lines *new, size_t *match) {
        _cleanup_free_ Slot *v = NULL;
        _cleanup_free_ Slot **of_new = NULL;
        Table t;
        size_t cap = 16;

        while (cap < 2 * (old->n + new->n))
                cap *= 2;
        v = calloc(cap, sizeof(Slot));
        of_new = calloc(new->n ? new->n : 1, sizeof(Slot *));
        if (!v || !of_new)
                return -ENOMEM;
        t = (Table){ v, cap - 1 };
        for (size_t i = 0; i < old->n; i++) {
                Slot *s = table_slot(&t, old->v + i);

                s->in_old++;
                s->old_at = i;
        }
        for (size_t j = 0; j < new->n; j++) {
                of_new[j] = table_slot(&t, new->v + j);
                of_new[j]->in_new++;
        }
        for (size_t j = 0; j < new->n; j++)
                match[j] = of_new[j]->in_old == 1 && of_new[j]->in_new == 1 ? of_new[j]->old_at : SIZE_MAX;
        return 0;
}

/* Keep in @match only the longest chain of pairs whose old lines ascend
 * (patience sorting: pile tops, a back link per pair). */
static int keep_longest_chain(size_t *match, size_t n) {
        _cleanup_free_ size_t *top = malloc((n ? n : 1) * sizeof(size_t));
        _cleanup_free_ size_t *back = malloc((n ? n : 1) * sizeof(size_t));
        size_t piles = 0, j;

        if (!top || !back)
                return -ENOMEM;
        for (j = 0; j < n; j++) {
                size_t lo = 0, hi = piles;

                if (match[j] == SIZE_MAX)
                        continue;
                while (lo < hi) {
                        size_t mid = lo + (hi - lo) / 2;

                        if (match[top[mid]] < match[j])
                                lo = mid + 1;
                        else
                                hi = mid;
                }
                back[j] = lo > 0 ? top[lo - 1] : SIZE_MAX;
                top[lo] = j;
                if (lo == piles)
                        piles++;
        }
        j = piles > 0 ? top[piles - 1] : SIZE_MAX;
        for (size_t k = n; k-- > 0;) {
                if (k == j) {
                        j = back[k];
                        continue;
                }
                match[k] = SIZE_MAX;
        }
        return 0;
}

static void put_line(StrBuf *b, char sign, const Line *l) {
        strbuf_putc(b, sign);
        strbuf_append(b, l->p, l->len);
        strbuf_putc(b, '\n');
}

/* The hunk for old[i, ei) and new[j, ej), after growing the equal lines at both ends away. */
static void put_gap(StrBuf *b, const Lines *old, const Lines *new, size_t i, size_t ei, size_t j,
                    size_t ej) {
        char head[HUNK_MAX];

        while (i < ei && j < ej && line_eq(old->v + i, new->v + j))
                i++, j++;
        while (ei > i && ej > j && line_eq(old->v + ei - 1, new->v + ej - 1))
                ei--, ej--;
        if (i == ei && j == ej)
                return;
        (void) snprintf(head, sizeof(head), "@%zu %zu %zu\n", i, ei - i, ej - j);
        strbuf_puts(b, head);
        for (size_t k = i; k < ei; k++)
                put_line(b, '-', old->v + k);
        for (size_t k = j; k < ej; k++)
                put_line(b, '+', new->v + k);
}

int map_delta_make(const char *old, size_t olen, const char *new, size_t nlen, size_t max, char **ret,
                   size_t *ret_len) {
        _cleanup_(lines_done) Lines a = {}, b = {};
        _cleanup_free_ size_t *match = NULL;
        _cleanup_(strbuf_done) StrBuf s = {};
        size_t i = 0, j = 0;
        int r;

        if ((r = lines_split(old, olen, &a)) < 0 || (r = lines_split(new, nlen, &b)) < 0)
                return r;
        match = malloc((b.n ? b.n : 1) * sizeof(size_t));
        if (!match)
                return -ENOMEM;
        if ((r = pair_unique(&a, &b, match)) < 0 || (r = keep_longest_chain(match, b.n)) < 0)
                return r;
        strbuf_puts(&s, MAP_DELTA_MAGIC);
        for (size_t k = 0; k <= b.n && !s.oom && s.len <= max; k++) {
                if (k < b.n && match[k] == SIZE_MAX)
                        continue;
                /* a pair, or the end of both maps: the gap before it is a hunk */
                put_gap(&s, &a, &b, i, k < b.n ? match[k] : a.n, j, k);
                i = k < b.n ? match[k] + 1 : a.n;
                j = k + 1;
        }
        if (s.oom)
                return -ENOMEM;
        if (s.len > max)
                return -E2BIG;
        *ret = strbuf_steal(&s, ret_len);
        return 0;
}

/* A decimal number of the hunk line at *@p, then @sep. */
static bool take_number(const char **p, const char *end, char sep, size_t *ret) {
        const char *q = *p;
        size_t v = 0;

        if (q >= end || *q < '0' || *q > '9' || (*q == '0' && q + 1 < end && q[1] != sep))
                return false;
        for (; q < end && *q >= '0' && *q <= '9'; q++) {
                if (v > (SIZE_MAX - 9) / 10)
                        return false;
                v = v * 10 + (size_t) (*q - '0');
        }
        if (q >= end || *q != sep)
                return false;
        *p = q + 1;
        *ret = v;
        return true;
}

typedef struct Reader {
        const char *p, *end;
        size_t line; /* of the delta, from 1 */
} Reader;

/* The next line of the delta, without its newline; false at the end or for a line cut short. */
static bool next_line(Reader *rd, Line *ret) {
        const char *nl;

        if (rd->p >= rd->end || !(nl = memchr(rd->p, '\n', (size_t) (rd->end - rd->p))))
                return false;
        *ret = (Line){ rd->p, (size_t) (nl - rd->p) };
        rd->p = nl + 1;
        rd->line++;
        return true;
}

static int bad(char **ret_error, const Reader *rd, const char *why) {
        return errmsg_set(ret_error, -EBADMSG, "delta line %zu: %s", rd->line, why);
}

static void put_lines(StrBuf *out, const Lines *base, size_t from, size_t to) {
        if (from < to)
                strbuf_append(out, base->v[from].p,
                              (size_t) (base->v[to - 1].p + base->v[to - 1].len + 1 - base->v[from].p));
}

/* One hunk at @rd's next line: base lines up to it copied, its lines checked and added. */
static int apply_hunk(Reader *rd, const Line *head, const Lines *base, size_t *pos, StrBuf *out,
                      char **ret_error) {
        const char *p = head->p + 1, *end = head->p + head->len + 1; /* the newline ends the last number */
        size_t k, del, add;
        Line l;

        if (head->len < 1 || head->p[0] != '@' || !take_number(&p, end, ' ', &k) ||
            !take_number(&p, end, ' ', &del) || !take_number(&p, end, '\n', &add) || p != end)
                return bad(ret_error, rd, "not a hunk header '@LINE REMOVED ADDED'");
        if (k < *pos || k > base->n || del > base->n - k || (del == 0 && add == 0))
                return bad(ret_error, rd, "a hunk out of order or past the end of the map");
        put_lines(out, base, *pos, k);
        for (size_t i = 0; i < del; i++)
                if (!next_line(rd, &l) || l.len < 1 || l.p[0] != '-' || l.len - 1 != base->v[k + i].len ||
                    memcmp(l.p + 1, base->v[k + i].p, l.len - 1) != 0)
                        return bad(ret_error, rd,
                                   "a removed line that is not the map's (a delta from another map)");
        for (size_t i = 0; i < add; i++) {
                if (!next_line(rd, &l) || l.len < 1 || l.p[0] != '+')
                        return bad(ret_error, rd, "an added line expected ('+LINE')");
                strbuf_append(out, l.p + 1, l.len - 1);
                strbuf_putc(out, '\n');
        }
        *pos = k + del;
        return 0;
}

int map_delta_apply(const char *base, size_t blen, const char *delta, size_t dlen, size_t max, char **ret,
                    size_t *ret_len, char **ret_error) {
        _cleanup_(lines_done) Lines b = {};
        _cleanup_(strbuf_done) StrBuf out = {};
        Reader rd = { delta, delta + dlen, 0 };
        size_t pos = 0;
        Line head;
        int r;

        if (dlen < strlen(MAP_DELTA_MAGIC) || memcmp(delta, MAP_DELTA_MAGIC, strlen(MAP_DELTA_MAGIC)) != 0)
                return errmsg_set(ret_error, -EBADMSG, "delta line 1: not '%.*s'",
                                  (int) strlen(MAP_DELTA_MAGIC) - 1, MAP_DELTA_MAGIC);
        if (dlen > 0 && delta[dlen - 1] != '\n')
                return errmsg_set(ret_error, -EBADMSG, "the delta's last line is cut short");
        r = lines_split(base, blen, &b);
        if (r == -EINVAL)
                return errmsg_set(ret_error, -EBADMSG, "the map's last line is cut short");
        if (r < 0)
                return r;
        rd.p += strlen(MAP_DELTA_MAGIC);
        rd.line = 1;
        strbuf_reserve(&out, blen);
        while (next_line(&rd, &head)) {
                r = apply_hunk(&rd, &head, &b, &pos, &out, ret_error);
                if (r < 0)
                        return r;
                if (out.len > max)
                        return errmsg_set(ret_error, -EFBIG, "the map would be over %zu bytes", max);
        }
        put_lines(&out, &b, pos, b.n);
        if (out.oom)
                return -ENOMEM;
        if (out.len > max)
                return errmsg_set(ret_error, -EFBIG, "the map would be over %zu bytes", max);
        *ret = strbuf_steal(&out, ret_len);
        return 0;
}
