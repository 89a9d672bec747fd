/* Attribute paths, split once and hashed as json-c hashes. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>
#include <json-c/linkhash.h>

#include "attr-path.h"
#include "util/cleanup.h"

#define PATHS_MAX 32

typedef struct Step {
        char *key;
        lh_hash_fn *hash_fn; /* the table function the hash was taken with */
        unsigned long hash;
} Step;

typedef struct Path {
        const char *text; /* by address */
        Step *steps;
        size_t n;
} Path;

struct AttrPaths {
        Path paths[PATHS_MAX];
        size_t n;
};

/* One step of a path: a key of @o, copied out only when it is long. */
static json_object *step_uncached(json_object *o, const char *step, size_t n) {
        _cleanup_free_ char *heap = NULL;
        char buf[256];
        const char *key = buf;
        json_object *v;

        if (n < sizeof(buf)) {
                memcpy(buf, step, n);
                buf[n] = 0;
        } else {
                key = heap = strndup(step, n);
                if (!heap)
                        return NULL;
        }
        if (!json_object_object_get_ex(o, key, &v) || json_object_is_type(v, json_type_null))
                return NULL;
        return v;
}

json_object *attr_path_extract(json_object *o, const char *path) {
        const char *p = path;

        if (!path || !*path)
                return NULL;
        for (;;) {
                const char *e = strchr(p, '/');
                size_t n = e ? (size_t) (e - p) : strlen(p);
                json_object *v;

                if (!json_object_is_type(o, json_type_object))
                        return NULL;
                v = step_uncached(o, p, n);
                if (!v)
                        return NULL;
                if (!e)
                        return v;
                o = v;
                p = e + 1;
        }
}

int attr_paths_new(AttrPaths **ret) {
        *ret = calloc(1, sizeof(**ret));
        return *ret ? 0 : -ENOMEM;
}

static void path_done(Path *p) {
        for (size_t i = 0; i < p->n; i++)
                free(p->steps[i].key);
        free(p->steps);
        *p = (Path){};
}

AttrPaths *attr_paths_free(AttrPaths *c) {
        if (!c)
                return NULL;
        for (size_t i = 0; i < c->n; i++)
                path_done(c->paths + i);
        free(c);
        return NULL;
}

/* Splits @text into @p's steps.  Return: 0 or -ENOMEM. */
static int path_compile(Path *p, const char *text) {
        size_t n = 1;

        for (const char *s = text; (s = strchr(s, '/')); s++)
                n++;
        *p = (Path){ .text = text, .steps = calloc(n, sizeof(Step)) };
        if (!p->steps)
                return -ENOMEM;
        for (const char *s = text;; p->n++) {
                const char *e = strchr(s, '/');

                p->steps[p->n].key = e ? strndup(s, (size_t) (e - s)) : strdup(s);
                if (!p->steps[p->n].key) {
                        path_done(p);
                        return -ENOMEM;
                }
                if (!e) {
                        p->n++;
                        return 0;
                }
                s = e + 1;
        }
}

static Path *path_find(AttrPaths *c, const char *text) {
        for (size_t i = 0; i < c->n; i++)
                if (c->paths[i].text == text)
                        return c->paths + i;
        if (c->n == PATHS_MAX || path_compile(c->paths + c->n, text) < 0)
                return NULL;
        return c->paths + c->n++;
}

static json_object *step_get(json_object *o, Step *s) {
        struct lh_table *t;
        struct lh_entry *e;
        json_object *v;

        if (!json_object_is_type(o, json_type_object) || !(t = json_object_get_object(o)))
                return NULL;
        if (s->hash_fn != t->hash_fn) {
                s->hash_fn = t->hash_fn;
                s->hash = t->hash_fn(s->key);
        }
        e = lh_table_lookup_entry_w_hash(t, s->key, s->hash);
        v = e ? (json_object *) lh_entry_v(e) : NULL;
        return json_object_is_type(v, json_type_null) ? NULL : v;
}

json_object *attr_paths_get(AttrPaths *c, json_object *o, const char *path) {
        Path *p;

        if (!path || !*path)
                return NULL;
        p = path_find(c, path);
        if (!p) /* the cache is full, or out of memory: the long way */
                return attr_path_extract(o, path);
        for (size_t i = 0; o && i < p->n; i++)
                o = step_get(o, p->steps + i);
        return o;
}
