/* YAML to ConfTree, on libyaml's event parser.
 *
 * The event API (rather than yaml_parser_load) lets us refuse aliases as they
 * appear, bound depth and node count while parsing, and catch duplicate keys
 * with the position of the second one.  libyaml already reports tabs used as
 * indentation and other syntax errors with a mark; we only add the file name.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <yaml.h>

#include "conf-tree.h"
#include "util/cleanup.h"
#include "util/errloc.h"
#include "util/fileio.h"
#include "util/macro.h"
#include "util/siphash.h"
#include "util/strv.h"

typedef struct Parser {
        yaml_parser_t yaml;
        const char *data;
        size_t len;
        const char *file;
        size_t n_nodes;
        char *error;
} Parser;

static ConfNode *conf_node_free(ConfNode *n) {
        if (!n)
                return NULL;
        for (size_t i = 0; i < n->n_children; i++)
                conf_node_free(n->children[i]);
        free(n->children);
        free(n->key);
        erase_and_free(n->value); /* it may be an inline secret */
        free(n);
        return NULL;
}
DEFINE_TRIVIAL_CLEANUP_FUNC(ConfNode *, conf_node_free);

ConfTree *conf_tree_free(ConfTree *t) {
        if (!t)
                return NULL;
        conf_node_free(t->root);
        free(t->file);
        free(t);
        return NULL;
}
DEFINE_TRIVIAL_CLEANUP_FUNC(ConfTree *, conf_tree_free);

static int parser_fail(Parser *p, const yaml_mark_t *m, const char *fmt, ...) _printf_(3, 4);
static int parser_fail(Parser *p, const yaml_mark_t *m, const char *fmt, ...) {
        va_list ap;

        if (p->error)
                return -EINVAL;
        va_start(ap, fmt);
        p->error = errloc_formatv(p->file, (unsigned) m->line + 1, (unsigned) m->column + 1, NULL, fmt, ap);
        va_end(ap);
        return -EINVAL;
}

static int parser_next(Parser *p, yaml_event_t *ev) {
        if (!yaml_parser_parse(&p->yaml, ev)) {
                const char *what = p->yaml.problem ?: "syntax error";
                size_t at = p->yaml.problem_mark.index;

                /* libyaml's message for a tab says nothing about tabs. */
                if (at < p->len && p->data[at] == '\t')
                        return parser_fail(p, &p->yaml.problem_mark,
                                           "a tab character: YAML indentation must use spaces");
                if (p->yaml.context)
                        return parser_fail(p, &p->yaml.problem_mark, "%s %s", what, p->yaml.context);
                return parser_fail(p, &p->yaml.problem_mark, "%s", what);
        }
        return 0;
}

static int node_new(Parser *p, ConfNodeType type, const yaml_mark_t *m, ConfNode **ret) {
        ConfNode *n;

        if (++p->n_nodes > CONF_NODES_MAX)
                return parser_fail(p, m, "too many nodes (more than %d)", CONF_NODES_MAX);
        n = calloc(1, sizeof(*n));
        if (!n)
                return -ENOMEM;
        n->type = type;
        n->file = p->file;
        n->line = (unsigned) m->line + 1;
        n->column = (unsigned) m->column + 1;
        *ret = n;
        return 0;
}

static int node_append(ConfNode *parent, ConfNode *child) {
        ConfNode **c = realloc(parent->children, (parent->n_children + 1) * sizeof(*c));

        if (!c)
                return -ENOMEM;
        c[parent->n_children++] = child;
        parent->children = c;
        return 0;
}

static int parse_node(Parser *p, yaml_event_t *ev, unsigned depth, ConfNode **ret);

static int parse_scalar(Parser *p, yaml_event_t *ev, ConfNode **ret) {
        _cleanup_(conf_node_freep) ConfNode *n = NULL;
        int r;

        r = node_new(p, CONF_SCALAR, &ev->start_mark, &n);
        if (r < 0)
                return r;
        if (strlen((const char *) ev->data.scalar.value) != ev->data.scalar.length)
                return parser_fail(p, &ev->start_mark, "NUL byte in value");
        n->value = strdup((const char *) ev->data.scalar.value);
        if (!n->value)
                return -ENOMEM;
        n->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
        *ret = TAKE_PTR(n);
        return 0;
}

static int parse_sequence(Parser *p, yaml_event_t *start, unsigned depth, ConfNode **ret) {
        _cleanup_(conf_node_freep) ConfNode *n = NULL;
        int r;

        r = node_new(p, CONF_SEQUENCE, &start->start_mark, &n);
        if (r < 0)
                return r;
        for (;;) {
                _cleanup_(conf_node_freep) ConfNode *child = NULL;
                yaml_event_t ev;

                r = parser_next(p, &ev);
                if (r < 0)
                        return r;
                if (ev.type == YAML_SEQUENCE_END_EVENT) {
                        yaml_event_delete(&ev);
                        break;
                }
                r = parse_node(p, &ev, depth + 1, &child);
                yaml_event_delete(&ev);
                if (r < 0)
                        return r;
                r = node_append(n, child);
                if (r < 0)
                        return r;
                child = NULL;
        }
        *ret = TAKE_PTR(n);
        return 0;
}

static int parse_mapping(Parser *p, yaml_event_t *start, unsigned depth, ConfNode **ret) {
        _cleanup_(conf_node_freep) ConfNode *n = NULL;
        int r;

        r = node_new(p, CONF_MAP, &start->start_mark, &n);
        if (r < 0)
                return r;
        for (;;) {
                _cleanup_(conf_node_freep) ConfNode *value = NULL;
                _cleanup_free_ char *key = NULL;
                yaml_mark_t key_mark;
                yaml_event_t ev;

                r = parser_next(p, &ev);
                if (r < 0)
                        return r;
                if (ev.type == YAML_MAPPING_END_EVENT) {
                        yaml_event_delete(&ev);
                        break;
                }
                key_mark = ev.start_mark;
                if (ev.type != YAML_SCALAR_EVENT) {
                        yaml_event_delete(&ev);
                        return parser_fail(p, &key_mark, "mapping keys must be plain strings");
                }
                key = strdup((const char *) ev.data.scalar.value);
                yaml_event_delete(&ev);
                if (!key)
                        return -ENOMEM;
                if (conf_node_get(n, key))
                        return parser_fail(p, &key_mark, "key '%s': duplicate key", key);

                r = parser_next(p, &ev);
                if (r < 0)
                        return r;
                r = parse_node(p, &ev, depth + 1, &value);
                yaml_event_delete(&ev);
                if (r < 0)
                        return r;
                value->key = TAKE_PTR(key);
                value->key_line = (unsigned) key_mark.line + 1;
                value->key_column = (unsigned) key_mark.column + 1;
                r = node_append(n, value);
                if (r < 0)
                        return r;
                value = NULL;
        }
        *ret = TAKE_PTR(n);
        return 0;
}

static int parse_node(Parser *p, yaml_event_t *ev, unsigned depth, ConfNode **ret) {
        if (depth > CONF_DEPTH_MAX)
                return parser_fail(p, &ev->start_mark, "nested deeper than %d levels", CONF_DEPTH_MAX);

        switch (ev->type) {
        case YAML_SCALAR_EVENT:
                return parse_scalar(p, ev, ret);
        case YAML_SEQUENCE_START_EVENT:
                return parse_sequence(p, ev, depth, ret);
        case YAML_MAPPING_START_EVENT:
                return parse_mapping(p, ev, depth, ret);
        case YAML_ALIAS_EVENT:
                return parser_fail(p, &ev->start_mark, "aliases are not supported");
        default:
                return parser_fail(p, &ev->start_mark, "unexpected YAML event");
        }
}

static int parse_document(Parser *p, ConfNode **ret) {
        _cleanup_(conf_node_freep) ConfNode *root = NULL;
        yaml_event_t ev;
        int r;

        /* STREAM-START, then DOCUMENT-START or STREAM-END for an empty file. */
        r = parser_next(p, &ev);
        if (r < 0)
                return r;
        yaml_event_delete(&ev);
        r = parser_next(p, &ev);
        if (r < 0)
                return r;
        if (ev.type == YAML_STREAM_END_EVENT) {
                yaml_mark_t m = ev.start_mark;
                yaml_event_delete(&ev);
                return node_new(p, CONF_MAP, &m, ret);
        }
        yaml_event_delete(&ev);

        r = parser_next(p, &ev);
        if (r < 0)
                return r;
        if (ev.type == YAML_SCALAR_EVENT && ev.data.scalar.length == 0) {
                yaml_mark_t m = ev.start_mark;
                yaml_event_delete(&ev);
                r = node_new(p, CONF_MAP, &m, &root);
        } else if (ev.type != YAML_MAPPING_START_EVENT) {
                yaml_mark_t m = ev.start_mark;
                yaml_event_delete(&ev);
                return parser_fail(p, &m, "the top level must be a mapping of keys");
        } else {
                r = parse_node(p, &ev, 0, &root);
                yaml_event_delete(&ev);
        }
        if (r < 0)
                return r;

        r = parser_next(p, &ev); /* DOCUMENT-END */
        if (r < 0)
                return r;
        yaml_event_delete(&ev);
        r = parser_next(p, &ev);
        if (r < 0)
                return r;
        if (ev.type != YAML_STREAM_END_EVENT) {
                yaml_mark_t m = ev.start_mark;
                yaml_event_delete(&ev);
                return parser_fail(p, &m, "only one YAML document is allowed");
        }
        yaml_event_delete(&ev);
        *ret = TAKE_PTR(root);
        return 0;
}

int conf_tree_parse(const char *file, const char *data, size_t len, ConfTree **ret, char **ret_error) {
        _cleanup_(conf_tree_freep) ConfTree *t = NULL;
        Parser p = {};
        int r;

        t = calloc(1, sizeof(*t));
        if (!t)
                return -ENOMEM;
        t->file = strdup(file);
        if (!t->file)
                return -ENOMEM;
        if (len > CONF_FILE_MAX) {
                if (ret_error && asprintf(ret_error, "%s: larger than %d bytes", file, CONF_FILE_MAX) < 0)
                        *ret_error = NULL;
                return -EFBIG;
        }
        if (!yaml_parser_initialize(&p.yaml))
                return -ENOMEM;
        p.file = t->file;
        p.data = data;
        p.len = len;
        yaml_parser_set_input_string(&p.yaml, (const unsigned char *) data, len);
        r = parse_document(&p, &t->root);
        yaml_parser_delete(&p.yaml);
        if (r < 0) {
                if (ret_error)
                        *ret_error = TAKE_PTR(p.error);
                free(p.error);
                return r;
        }
        *ret = TAKE_PTR(t);
        return 0;
}

int conf_tree_load(const char *path, ConfTree **ret, char **ret_error) {
        _cleanup_free_ char *data = NULL;
        size_t len;
        int r;

        r = fileio_read(path, CONF_FILE_MAX, &data, &len);
        if (r < 0) {
                if (ret_error &&
                    asprintf(ret_error, "%s: %s", path, r == -EFBIG ? "file too large" : strerror(-r)) < 0)
                        *ret_error = NULL;
                return r;
        }
        r = conf_tree_parse(path, data, len, ret, ret_error);
        explicit_bzero(data, len); /* inline secrets */
        return r;
}

const ConfNode *conf_node_get(const ConfNode *map, const char *key) {
        if (!map || map->type != CONF_MAP)
                return NULL;
        for (size_t i = 0; i < map->n_children; i++)
                if (streq(map->children[i]->key, key))
                        return map->children[i];
        return NULL;
}

static bool skipped(const ConfNode *n, const char *const *skip) {
        return skip && n->key && strv_contains((char *const *) skip, n->key);
}

/* The next child of @n from *i on that @skip does not name, or NULL. */
static const ConfNode *next_child(const ConfNode *n, size_t *i, const char *const *skip) {
        while (*i < n->n_children) {
                const ConfNode *c = n->children[(*i)++];
                if (!skipped(c, skip))
                        return c;
        }
        return NULL;
}

bool conf_node_equal(const ConfNode *a, const ConfNode *b, const char *const *skip) {
        size_t i = 0, k = 0;

        if (a == b)
                return true;
        if (!a || !b || a->type != b->type || a->plain != b->plain || !streq_ptr(a->value, b->value) ||
            a->names_file != b->names_file || a->file_id != b->file_id)
                return false;
        for (;;) {
                const ConfNode *x = next_child(a, &i, skip), *y = next_child(b, &k, skip);

                if (!x || !y)
                        return x == y;
                if (!streq_ptr(x->key, y->key) || !conf_node_equal(x, y, NULL))
                        return false;
        }
}

void conf_node_note_file(const ConfNode *n, const char *path) {
        ConfNode *w = (ConfNode *) n; /* the host's tree; modules see it const */
        struct stat st;
        uint64_t f[7] = {};

        if (stat(path, &st) < 0)
                f[0] = (uint64_t) errno;
        else
                memcpy(f,
                       (const uint64_t[]){ st.st_dev, st.st_ino, (uint64_t) st.st_size,
                                           (uint64_t) st.st_mtim.tv_sec, (uint64_t) st.st_mtim.tv_nsec,
                                           (uint64_t) st.st_ctim.tv_sec, (uint64_t) st.st_ctim.tv_nsec },
                       sizeof(f));
        w->names_file = true;
        w->file_id = siphash13(0, 0, (const unsigned char *) f, sizeof(f));
}

char *conf_node_error(const ConfNode *n, const char *fmt, ...) {
        va_list ap;
        char *s;

        va_start(ap, fmt);
        s = n->key ? errloc_formatv(n->file, n->key_line, n->key_column, n->key, fmt, ap)
                   : errloc_formatv(n->file, n->line, n->column, NULL, fmt, ap);
        va_end(ap);
        return s;
}
