/* The page tree: a strict-subset parser, json-c conversion, lookups.
 *
 * What the parser accepts, json-c (strict mode) accepts and reads the same
 * way; the differential checks in test-scim-json and in the fuzz target
 * hold it to that.  Accepted: objects whose keys are plain strings (no
 * escape, no control character) and unique, with at most
 * SCIM_JSON_FAST_MEMBERS_MAX members; arrays; strings of bytes from 0x20
 * up (UTF-8 or not, as json-c takes them) with the two-character escapes
 * and \uXXXX below U+D800 or above U+DFFF, but not \u0000; integers of at
 * most 18 digits without a leading zero or "-0"; true, false, null; the
 * four JSON whitespace characters; nesting up to SCIM_JSON_FAST_DEPTH_MAX;
 * an object or array at the top.  Everything else is -EAGAIN, including
 * text json-c would refuse.
 *
 * Values, keys and strings live in the document's arena; an object's or
 * array's children are gathered on one stack while it is open and copied
 * out when it closes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "scim-json.h"
#include "util/cleanup.h"
#include "util/macro.h"

#define CHUNK_MIN (64 * 1024)
#define FALLBACK (-EAGAIN)

typedef struct Chunk Chunk;
struct Chunk {
        Chunk *next;
        size_t used, size;
        max_align_t data[];
};

struct ScimJsonDoc {
        Chunk *chunks;
        ScimJson root;
};

typedef struct Parser {
        const char *p, *end;
        ScimJsonDoc *doc;
        ScimJsonMember *stack; /* children of the open containers */
        size_t n_stack, cap_stack;
        unsigned depth;
} Parser;

static int parse_value(Parser *ps, ScimJson *ret);

/* ---- arena ------------------------------------------------------------------ */

static void *arena_alloc(ScimJsonDoc *d, size_t n) {
        Chunk *c = d->chunks;
        void *p;

        n = (n + sizeof(max_align_t) - 1) & ~(sizeof(max_align_t) - 1);
        if (!c || c->size - c->used < n) {
                size_t size = MAX((size_t) CHUNK_MIN, n);

                c = malloc(sizeof(Chunk) + size);
                if (!c)
                        return NULL;
                *c = (Chunk) { .next = d->chunks, .size = size };
                d->chunks = c;
        }
        p = (char *) c->data + c->used;
        c->used += n;
        return p;
}

static char *arena_strndup(ScimJsonDoc *d, const char *s, size_t n) {
        char *t = arena_alloc(d, n + 1);

        if (!t)
                return NULL;
        memcpy(t, s, n);
        t[n] = 0;
        return t;
}

static int doc_new(ScimJsonDoc **ret) {
        *ret = calloc(1, sizeof(ScimJsonDoc));
        return *ret ? 0 : -ENOMEM;
}

ScimJsonDoc *scim_json_free(ScimJsonDoc *d) {
        if (!d)
                return NULL;
        while (d->chunks) {
                Chunk *c = d->chunks;

                d->chunks = c->next;
                free(c);
        }
        free(d);
        return NULL;
}

const ScimJson *scim_json_root(const ScimJsonDoc *d) {
        return &d->root;
}

/* ---- parser ----------------------------------------------------------------- */

static bool is_ws(char c) {
        return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static void skip_ws(Parser *ps) {
        while (ps->p < ps->end && is_ws(*ps->p))
                ps->p++;
}

/* The next byte after whitespace, or 0 at the end (NUL is never accepted). */
static char peek(Parser *ps) {
        skip_ws(ps);
        return ps->p < ps->end ? *ps->p : 0;
}

static int push(Parser *ps, const ScimJsonMember *m) {
        if (ps->n_stack == ps->cap_stack) {
                size_t cap = ps->cap_stack ? ps->cap_stack * 2 : 256;
                ScimJsonMember *s = reallocarray(ps->stack, cap, sizeof(ScimJsonMember));

                if (!s)
                        return -ENOMEM;
                ps->stack = s;
                ps->cap_stack = cap;
        }
        ps->stack[ps->n_stack++] = *m;
        return 0;
}

static int hex4(const char *p, uint32_t *ret) {
        uint32_t v = 0;

        for (int i = 0; i < 4; i++) {
                char c = p[i];
                int d = c >= '0' && c <= '9' ? c - '0' :
                        c >= 'a' && c <= 'f' ? c - 'a' + 10 :
                        c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
                if (d < 0)
                        return FALLBACK;
                v = v << 4 | (uint32_t) d;
        }
        *ret = v;
        return 0;
}

static size_t put_utf8(char *out, uint32_t cp) {
        if (cp < 0x80) {
                out[0] = (char) cp;
                return 1;
        }
        if (cp < 0x800) {
                out[0] = (char) (0xC0 | cp >> 6);
                out[1] = (char) (0x80 | (cp & 0x3F));
                return 2;
        }
        out[0] = (char) (0xE0 | cp >> 12);
        out[1] = (char) (0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char) (0x80 | (cp & 0x3F));
        return 3;
}

/* One escape after the backslash at @p; the decoded bytes go to @out. */
static int unescape(const char *p, const char *end, char *out, size_t *ret_in, size_t *ret_out) {
        static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
        const char *e;
        uint32_t cp;

        if (p + 1 >= end)
                return FALLBACK;
        e = strchr(from, p[1]);
        if (e && p[1] != 0) {
                out[0] = to[e - from];
                *ret_in = 2;
                *ret_out = 1;
                return 0;
        }
        if (p[1] != 'u' || end - p < 6 || hex4(p + 2, &cp) < 0 || cp == 0 || (cp >= 0xD800 && cp <= 0xDFFF))
                return FALLBACK;
        *ret_in = 6;
        *ret_out = put_utf8(out, cp);
        return 0;
}

/* A string with escapes, from @start (after the quote); decoded output is never longer. */
static int parse_escaped(Parser *ps, const char *start, ScimJson *ret) {
        const char *p = start;
        char *out, *o;

        while (p < ps->end && *p != '"')
                p += *p == '\\' && p + 1 < ps->end ? 2 : 1;
        if (p >= ps->end)
                return FALLBACK;
        out = o = arena_alloc(ps->doc, (size_t) (p - start) + 1);
        if (!out)
                return -ENOMEM;
        for (p = start; *p != '"';) {
                size_t in, n;

                if ((unsigned char) *p < 0x20)
                        return FALLBACK;
                if (*p != '\\') {
                        *o++ = *p++;
                        continue;
                }
                if (unescape(p, ps->end, o, &in, &n) < 0)
                        return FALLBACK;
                p += in;
                o += n;
        }
        *o = 0;
        ps->p = p + 1;
        *ret = (ScimJson) { .type = SCIM_JSON_STRING, .n = (uint32_t) (o - out), .s = out };
        return 0;
}

/* Bytes up to the next quote, backslash or control character. */
static const char *plain_end(const char *p, const char *end) {
        while (p < end && (unsigned char) *p >= 0x20 && *p != '"' && *p != '\\')
                p++;
        return p;
}

static int parse_string(Parser *ps, ScimJson *ret) {
        const char *start = ps->p + 1, *e = plain_end(start, ps->end);
        char *s;

        if (e >= ps->end || (unsigned char) *e < 0x20 || (size_t) (e - start) >= UINT32_MAX)
                return FALLBACK;
        if (*e == '\\')
                return parse_escaped(ps, start, ret);
        s = arena_strndup(ps->doc, start, (size_t) (e - start));
        if (!s)
                return -ENOMEM;
        ps->p = e + 1;
        *ret = (ScimJson) { .type = SCIM_JSON_STRING, .n = (uint32_t) (e - start), .s = s };
        return 0;
}

static int parse_number(Parser *ps, ScimJson *ret) {
        const char *p = ps->p;
        bool neg = *p == '-';
        int64_t v = 0;
        int digits = 0;

        if (neg)
                p++;
        if (p < ps->end && *p == '0' && !neg)
                p++;
        else if (p < ps->end && *p >= '1' && *p <= '9')
                for (; p < ps->end && *p >= '0' && *p <= '9'; p++, digits++) {
                        if (digits == 18)
                                return FALLBACK;
                        v = v * 10 + (*p - '0');
                }
        else
                return FALLBACK;
        if (p < ps->end && ((*p >= '0' && *p <= '9') || *p == '.' || *p == 'e' || *p == 'E'))
                return FALLBACK;
        ps->p = p;
        *ret = (ScimJson) { .type = SCIM_JSON_INT, .i = neg ? -v : v };
        return 0;
}

static int parse_literal(Parser *ps, ScimJson *ret) {
        static const struct {
                const char *text;
                ScimJson value;
        } literals[] = {
                { "true", { .type = SCIM_JSON_BOOLEAN, .b = true } },
                { "false", { .type = SCIM_JSON_BOOLEAN, .b = false } },
                { "null", { .type = SCIM_JSON_NULL } },
        };

        for (size_t i = 0; i < ELEMENTSOF(literals); i++) {
                size_t n = strlen(literals[i].text);

                if ((size_t) (ps->end - ps->p) >= n && memcmp(ps->p, literals[i].text, n) == 0) {
                        ps->p += n;
                        *ret = literals[i].value;
                        return 0;
                }
        }
        return FALLBACK;
}

/* A key: a plain string, unique among the members gathered since @base. */
static int parse_key(Parser *ps, size_t base, ScimJsonMember *m) {
        const char *start = ps->p + 1, *e = plain_end(start, ps->end);

        if (e >= ps->end || *e != '"')
                return FALLBACK;
        m->key_len = (size_t) (e - start);
        for (size_t i = base; i < ps->n_stack; i++)
                if (ps->stack[i].key_len == m->key_len && memcmp(ps->stack[i].key, start, m->key_len) == 0)
                        return FALLBACK;
        m->key = arena_strndup(ps->doc, start, m->key_len);
        if (!m->key)
                return -ENOMEM;
        ps->p = e + 1;
        return peek(ps) == ':' ? (ps->p++, 0) : FALLBACK;
}

/* After a member or element: 1 for ',', 0 for @close, else fallback. */
static int next_or_close(Parser *ps, char close) {
        char c = peek(ps);

        if (c != ',' && c != close)
                return FALLBACK;
        ps->p++;
        return c == ',';
}

static int parse_object(Parser *ps, ScimJson *ret) {
        size_t base = ps->n_stack, n;
        ScimJsonMember *members;
        int r;

        ps->p++;
        if (peek(ps) != '}')
                for (;;) {
                        ScimJsonMember m = {};

                        if (peek(ps) != '"' || ps->n_stack - base >= SCIM_JSON_FAST_MEMBERS_MAX)
                                return FALLBACK;
                        r = parse_key(ps, base, &m);
                        if (r >= 0)
                                r = parse_value(ps, &m.value);
                        if (r >= 0)
                                r = push(ps, &m);
                        if (r >= 0)
                                r = next_or_close(ps, '}');
                        if (r <= 0)
                                break;
                }
        else {
                ps->p++;
                r = 0;
        }
        if (r < 0)
                return r;
        n = ps->n_stack - base;
        members = arena_alloc(ps->doc, n * sizeof(ScimJsonMember) + 1);
        if (!members)
                return -ENOMEM;
        memcpy(members, ps->stack + base, n * sizeof(ScimJsonMember));
        ps->n_stack = base;
        *ret = (ScimJson) { .type = SCIM_JSON_OBJECT, .n = (uint32_t) n, .members = members };
        return 0;
}

static int parse_array(Parser *ps, ScimJson *ret) {
        size_t base = ps->n_stack, n;
        ScimJson *items;
        int r = 0;

        ps->p++;
        if (peek(ps) != ']')
                for (;;) {
                        ScimJsonMember m = {};

                        r = parse_value(ps, &m.value);
                        if (r >= 0)
                                r = push(ps, &m);
                        if (r >= 0)
                                r = next_or_close(ps, ']');
                        if (r <= 0)
                                break;
                }
        else
                ps->p++;
        if (r < 0)
                return r;
        n = ps->n_stack - base;
        if (n >= UINT32_MAX)
                return FALLBACK;
        items = arena_alloc(ps->doc, n * sizeof(ScimJson) + 1);
        if (!items)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                items[i] = ps->stack[base + i].value;
        ps->n_stack = base;
        *ret = (ScimJson) { .type = SCIM_JSON_ARRAY, .n = (uint32_t) n, .items = items };
        return 0;
}

static int parse_value(Parser *ps, ScimJson *ret) {
        char c = peek(ps);
        int r;

        switch (c) {
        case '{':
        case '[':
                if (++ps->depth > SCIM_JSON_FAST_DEPTH_MAX)
                        return FALLBACK;
                r = c == '{' ? parse_object(ps, ret) : parse_array(ps, ret);
                ps->depth--;
                return r;
        case '"':
                return parse_string(ps, ret);
        case '-':
        case '0' ... '9':
                return parse_number(ps, ret);
        case 't':
        case 'f':
        case 'n':
                return parse_literal(ps, ret);
        default:
                return FALLBACK;
        }
}

int scim_json_parse(const char *buf, size_t len, ScimJsonDoc **ret) {
        _cleanup_(scim_json_freep) ScimJsonDoc *d = NULL;
        Parser ps = { .p = buf, .end = buf + len };
        int r;

        r = doc_new(&d);
        if (r < 0)
                return r;
        ps.doc = d;
        /* json-c cannot tell where a bare number at the end of the text ends */
        if (peek(&ps) != '{' && peek(&ps) != '[')
                return FALLBACK;
        r = parse_value(&ps, &d->root);
        free(ps.stack);
        if (r < 0)
                return r;
        skip_ws(&ps);
        if (ps.p != ps.end)
                return FALLBACK;
        *ret = TAKE_PTR(d);
        return 0;
}

/* ---- json-c trees ------------------------------------------------------------ */

static int convert(ScimJsonDoc *d, json_object *o, ScimJson *ret);

static int convert_object(ScimJsonDoc *d, json_object *o, ScimJson *ret) {
        size_t n = (size_t) json_object_object_length(o), i = 0;
        ScimJsonMember *members = arena_alloc(d, n * sizeof(ScimJsonMember) + 1);
        int r;

        if (!members)
                return -ENOMEM;
        json_object_object_foreach(o, key, value) {
                if (i == n)
                        break;
                members[i] = (ScimJsonMember) { .key_len = strlen(key) };
                members[i].key = arena_strndup(d, key, members[i].key_len);
                if (!members[i].key)
                        return -ENOMEM;
                r = convert(d, value, &members[i].value);
                if (r < 0)
                        return r;
                i++;
        }
        *ret = (ScimJson) { .type = SCIM_JSON_OBJECT, .n = (uint32_t) i, .members = members };
        return 0;
}

static int convert_array(ScimJsonDoc *d, json_object *o, ScimJson *ret) {
        size_t n = json_object_array_length(o);
        ScimJson *items = arena_alloc(d, n * sizeof(ScimJson) + 1);
        int r;

        if (!items)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                r = convert(d, json_object_array_get_idx(o, i), items + i);
                if (r < 0)
                        return r;
        }
        *ret = (ScimJson) { .type = SCIM_JSON_ARRAY, .n = (uint32_t) n, .items = items };
        return 0;
}

static int convert(ScimJsonDoc *d, json_object *o, ScimJson *ret) {
        switch (json_object_get_type(o)) {
        case json_type_boolean:
                *ret = (ScimJson) { .type = SCIM_JSON_BOOLEAN, .b = json_object_get_boolean(o) };
                return 0;
        case json_type_double:
                *ret = (ScimJson) { .type = SCIM_JSON_DOUBLE };
                return 0;
        case json_type_int:
                *ret = (ScimJson) { .type = SCIM_JSON_INT, .i = json_object_get_int64(o) };
                return 0;
        case json_type_string: {
                size_t n = (size_t) json_object_get_string_len(o);
                const char *s = arena_strndup(d, json_object_get_string(o), n);

                if (!s)
                        return -ENOMEM;
                *ret = (ScimJson) { .type = SCIM_JSON_STRING, .n = (uint32_t) n, .s = s };
                return 0;
        }
        case json_type_array:
                return convert_array(d, o, ret);
        case json_type_object:
                return convert_object(d, o, ret);
        default:
                *ret = (ScimJson) { .type = SCIM_JSON_NULL };
                return 0;
        }
}

int scim_json_from_jsonc(json_object *o, ScimJsonDoc **ret) {
        _cleanup_(scim_json_freep) ScimJsonDoc *d = NULL;
        int r;

        r = doc_new(&d);
        if (r < 0)
                return r;
        r = convert(d, o, &d->root);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(d);
        return 0;
}

/* ---- reading ---------------------------------------------------------------- */

const ScimJson *scim_json_get(const ScimJson *o, const char *key, size_t len) {
        if (!scim_json_is(o, SCIM_JSON_OBJECT))
                return NULL;
        for (uint32_t i = 0; i < o->n; i++)
                if (o->members[i].key_len == len && memcmp(o->members[i].key, key, len) == 0)
                        return &o->members[i].value;
        return NULL;
}

static bool members_equal(const ScimJson *a, const ScimJson *b) {
        for (uint32_t i = 0; i < a->n; i++)
                if (a->members[i].key_len != b->members[i].key_len ||
                    memcmp(a->members[i].key, b->members[i].key, a->members[i].key_len) != 0 ||
                    !scim_json_equal(&a->members[i].value, &b->members[i].value))
                        return false;
        return true;
}

bool scim_json_equal(const ScimJson *a, const ScimJson *b) {
        if (a->type != b->type || (a->type != SCIM_JSON_DOUBLE && a->type != SCIM_JSON_NULL && a->n != b->n))
                return false;
        switch (a->type) {
        case SCIM_JSON_BOOLEAN:
                return a->b == b->b;
        case SCIM_JSON_INT:
                return a->i == b->i;
        case SCIM_JSON_STRING:
                return memcmp(a->s, b->s, a->n + 1) == 0;
        case SCIM_JSON_ARRAY:
                for (uint32_t i = 0; i < a->n; i++)
                        if (!scim_json_equal(a->items + i, b->items + i))
                                return false;
                return true;
        case SCIM_JSON_OBJECT:
                return members_equal(a, b);
        default:
                return true;
        }
}
