#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "scim-page.h"
#include "util/cleanup.h"
#include "util/json-util.h"
#include "util/errloc.h"
#include "util/macro.h"

void scim_page_done(ScimPage *p) {
        if (!p)
                return;
        json_object_put(p->root);
        *p = (ScimPage){ .start_index = -1, .items_per_page = -1 };
}

static bool get_count(json_object *root, const char *key, int64_t *ret) {
        json_object *v;

        if (!json_object_object_get_ex(root, key, &v) || !json_object_is_type(v, json_type_int))
                return false;
        *ret = json_object_get_int64(v);
        return true;
}

/* RFC 3986 unreserved: what RFC 9865 allows in a cursor. */
static bool unreserved(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
               c == '.' || c == '_' || c == '~';
}

static bool cursor_valid(const char *s, size_t n) {
        if (n > SCIM_CURSOR_MAX)
                return false;
        for (size_t i = 0; i < n; i++)
                if (!unreserved(s[i]))
                        return false;
        return true;
}

static int get_cursor(json_object *root, ScimPage *p, char **ret_error) {
        json_object *v;

        if (!json_object_object_get_ex(root, "nextCursor", &v) || json_object_is_type(v, json_type_null))
                return 0;
        if (!json_object_is_type(v, json_type_string) ||
            !cursor_valid(json_object_get_string(v), (size_t) json_object_get_string_len(v)))
                return errmsg_set(ret_error, -EBADMSG,
                                  "nextCursor is not a string of at most %d URL-safe characters (RFC 9865)",
                                  SCIM_CURSOR_MAX);
        if (json_object_get_string_len(v) > 0)
                p->next_cursor = json_object_get_string(v);
        return 0;
}

struct json_tokener *scim_json_tokener_new(void) {
        json_tokener *tok = json_tokener_new_ex(SCIM_JSON_DEPTH_MAX);

        if (tok)
                json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
        return tok;
}

int scim_json_parse_with(struct json_tokener *tok, const char *buf, size_t len, json_object **ret,
                         char **ret_error) {
        _cleanup_tokener_ json_tokener *own = NULL;
        json_object *root;
        enum json_tokener_error jerr;
        size_t end;

        if (len > INT32_MAX)
                return errmsg_set(ret_error, -EBADMSG, "body too large");
        if (!tok) {
                tok = own = scim_json_tokener_new();
                if (!tok)
                        return -ENOMEM;
        }
        json_tokener_reset(tok);
        root = json_tokener_parse_ex(tok, buf, (int) len);
        jerr = json_tokener_get_error(tok);
        end = json_tokener_get_parse_end(tok);
        json_tokener_reset(tok); /* drops what a truncated body left on its stack */
        if (jerr == json_tokener_continue) {
                json_object_put(root);
                return errmsg_set(ret_error, -EBADMSG, "truncated JSON");
        }
        if (!root || jerr != json_tokener_success) {
                json_object_put(root);
                return errmsg_set(ret_error, -EBADMSG, "invalid JSON: %s", json_tokener_error_desc(jerr));
        }
        for (; end < len; end++)
                if (!buf[end] || !strchr(" \t\r\n", buf[end])) {
                        json_object_put(root);
                        return errmsg_set(ret_error, -EBADMSG, "trailing data after the JSON value");
                }
        *ret = root;
        return 0;
}

int scim_json_parse(const char *buf, size_t len, json_object **ret, char **ret_error) {
        return scim_json_parse_with(NULL, buf, len, ret, ret_error);
}

static int page_parse(json_tokener *tok, const char *buf, size_t len, unsigned flags, ScimPage *ret,
                      char **ret_error) {
        json_object *root, *res = NULL;
        ScimPage p = { .start_index = -1, .items_per_page = -1 };
        int r;

        r = scim_json_parse_with(tok, buf, len, &root, ret_error);
        if (r < 0)
                return r;
        p.root = root;
        if (!json_object_is_type(root, json_type_object)) {
                scim_page_done(&p);
                return errmsg_set(ret_error, -EBADMSG, "not a JSON object");
        }
        if (!(flags & SCIM_PAGE_IGNORE_CURSOR)) {
                r = get_cursor(root, &p, ret_error);
                if (r < 0) {
                        scim_page_done(&p);
                        return r;
                }
        }
        /* RFC 9865 lets a cursor listing leave it out: a page paged by
         * cursor, or one handing out a nextCursor, is one */
        p.total_results = -1;
        if (json_object_object_get_ex(root, "totalResults", NULL) ||
            !((flags & SCIM_PAGE_CURSOR) || p.next_cursor))
                if (!get_count(root, "totalResults", &p.total_results) || p.total_results < 0) {
                        scim_page_done(&p);
                        return errmsg_set(ret_error, -EBADMSG, "missing or invalid totalResults");
                }
        (void) get_count(root, "startIndex", &p.start_index);
        (void) get_count(root, "itemsPerPage", &p.items_per_page);
        if (json_object_object_get_ex(root, "Resources", &res) &&
            !json_object_is_type(res, json_type_null)) {
                if (!json_object_is_type(res, json_type_array)) {
                        scim_page_done(&p);
                        return errmsg_set(ret_error, -EBADMSG, "Resources is not an array");
                }
                p.resources = res;
                p.n_resources = json_object_array_length(res);
        }
        *ret = p;
        return 0;
}

int scim_page_parse(const char *buf, size_t len, unsigned flags, ScimPage *ret, char **ret_error) {
        return page_parse(NULL, buf, len, flags, ret, ret_error);
}

/* A one-pass scan of a JSON text that estimates what json-c will allocate
 * for it and counts the elements of the top-level "Resources" array.  It
 * does not validate: the parser does that afterwards, if the page is
 * affordable.  Costs are per value on x86_64 with glibc malloc, rounded up
 * from measurements of json-c 0.16 (an empty object is ~800 bytes, which is
 * why three million "{}," once cost 2.3 GB). */
typedef struct Prescan {
        uint64_t cost;
        uint64_t resources;
} Prescan;

enum {
        COST_OBJECT = 800,
        COST_ARRAY = 400,
        COST_STRING = 112, /* plus its length */
        COST_SCALAR = 96,  /* 48 for the value, up to 16 for its slot in a growing array, malloc's share */
};

/* The index of the quote that closes the string starting at @start, or
 * @len.  memchr() finds quotes a word at a time; a quote preceded by an odd
 * run of backslashes is escaped (the run cannot reach back past the
 * opening quote, which is not a backslash). */
static size_t string_end(const char *buf, size_t start, size_t len) {
        size_t i = start;

        for (;;) {
                const char *q = i < len ? memchr(buf + i, '"', len - i) : NULL;
                size_t k, run = 0;

                if (!q)
                        return len;
                k = (size_t) (q - buf);
                while (k - run > start && buf[k - run - 1] == '\\')
                        run++;
                if (run % 2 == 0)
                        return k;
                i = k + 1;
        }
}

static bool is_space(char ch) {
        return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n';
}

static void prescan(const char *buf, size_t len, Prescan *ret) {
        static const char resources_key[] = "Resources";
        size_t depth = 0, resources_depth = 0; /* depth of a Resources array's elements, 0: outside */
        bool key_is_resources = false, in_scalar = false;
        Prescan s = { 0 };

        for (size_t i = 0; i < len; i++) {
                char ch = buf[i];
                bool value_start = false;

                if (ch == '"') {
                        size_t start = ++i;

                        i = string_end(buf, start, len);
                        s.cost += COST_STRING + (i - start);
                        /* a key of the root object (the parser checks it is one) */
                        if (depth == 1)
                                key_is_resources = i - start == strlen(resources_key) &&
                                                   memcmp(buf + start, resources_key, i - start) == 0;
                        value_start = true;
                        in_scalar = false;
                } else if (ch == '{' || ch == '[') {
                        s.cost += ch == '{' ? COST_OBJECT : COST_ARRAY;
                        value_start = true;
                        depth++;
                        /* every one counts: json-c keeps the last of duplicate keys */
                        if (ch == '[' && depth == 2 && key_is_resources && resources_depth == 0)
                                resources_depth = 3;
                        in_scalar = false;
                } else if (ch == '}' || ch == ']') {
                        if (resources_depth > 0 && depth == resources_depth - 1)
                                resources_depth = 0;
                        depth -= depth > 0;
                        in_scalar = false;
                } else if (ch == ',' || ch == ':' || is_space(ch))
                        in_scalar = false;
                else if (!in_scalar) {
                        s.cost += COST_SCALAR;
                        value_start = in_scalar = true;
                }
                /* an element of Resources starts at its depth, not as a key of an object in it */
                if (value_start && resources_depth > 0 &&
                    depth - (ch == '{' || ch == '[') == resources_depth - 1)
                        s.resources++;
        }
        *ret = s;
}

int scim_page_parse_bounded(struct json_tokener *tok, const char *buf, size_t len, int64_t page_size,
                            unsigned flags, ScimPage *ret, char **ret_error) {
        uint64_t budget = MIN((uint64_t) SCIM_PAGE_PARSE_FACTOR * len + SCIM_PAGE_PARSE_SLACK,
                              (uint64_t) SCIM_PAGE_PARSE_MAX);
        uint64_t max = scim_page_resources_max(page_size);
        Prescan s;

        prescan(buf, len, &s);
        if (s.resources > max) {
                return errmsg_set(ret_error, -EBADMSG,
                                  "%" PRIu64 " Resources on a page that asked for %" PRId64
                                  " (at most %" PRIu64 " accepted)",
                                  s.resources, page_size, max);
        }
        if (s.cost > budget) {
                return errmsg_set(ret_error, -EBADMSG,
                                  "page of %zu bytes would take about %" PRIu64
                                  " MiB to parse (at most %" PRIu64 " MiB)",
                                  len, s.cost >> 20, budget >> 20);
        }
        return page_parse(tok, buf, len, flags, ret, ret_error);
}
