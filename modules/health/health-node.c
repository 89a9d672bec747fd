/* A HealthNode's state flags, and `scontrol show node` records into
 * HealthNode: NodeName=, State=, Partitions= and Reason= (whose
 * " [user@time]" tail scontrol adds goes).  Everything else is skipped; a
 * line is never longer than the text. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "health-node.h"
#include "util/cleanup.h"
#include "util/macro.h"
#include "util/strv.h"

#define NODES_MAX 100000

void health_node_clear(HealthNode *n) {
        free(n->name);
        free(n->state);
        free(n->reason);
        strv_free(n->partitions);
        *n = (HealthNode){};
}

/* @flag is one of the '+'-joined words of the state. */
bool health_node_has_flag(const HealthNode *n, const char *flag) {
        size_t len = strlen(flag);

        for (const char *p = n->state ?: ""; *p;) {
                size_t w = strcspn(p, "+");
                if (w == len && strncmp(p, flag, len) == 0)
                        return true;
                p += w;
                p += *p == '+';
        }
        return false;
}

bool health_node_drained(const HealthNode *n) {
        return health_node_has_flag(n, "DRAIN") || health_node_has_flag(n, "DRAINING") ||
               health_node_has_flag(n, "DRAINED");
}

bool health_node_unreachable(const HealthNode *n) {
        static const char *const flags[] = { "DOWN",   "NOT_RESPONDING", "FAIL",
                                             "FUTURE", "POWERED_DOWN",   "POWER_DOWN" };

        for (size_t i = 0; i < ELEMENTSOF(flags); i++)
                if (health_node_has_flag(n, flags[i]))
                        return true;
        return false;
}

/* The reason as it stands: Slurm 24.11 keeps a drain's reason on the node
 * after it is resumed (22.05 clears it), and sinfo -R shows it no more, so
 * the reason of a node neither drained nor unreachable is an old one and
 * is nobody's. */
const char *health_node_reason(const HealthNode *n) {
        return health_node_drained(n) || health_node_unreachable(n) ? n->reason : NULL;
}

bool health_node_busy(const HealthNode *n) {
        return health_node_has_flag(n, "ALLOCATED") || health_node_has_flag(n, "MIXED") ||
               health_node_has_flag(n, "COMPLETING");
}

HealthNode *health_nodes_free(HealthNode *nodes, size_t n) {
        for (size_t i = 0; nodes && i < n; i++)
                health_node_clear(&nodes[i]);
        free(nodes);
        return NULL;
}

const HealthNode *health_nodes_find(const HealthNode *nodes, size_t n, const char *name) {
        for (size_t i = 0; i < n; i++)
                if (streq_ptr(nodes[i].name, name))
                        return &nodes[i];
        return NULL;
}

/* The value of @key when @line starts with it, up to the next blank; NULL
 * otherwise.  Only at the start: a word inside OS= or Features= text may
 * look like a key too. */
static char *line_value(const char *line, size_t len, const char *key) {
        size_t k = strlen(key), e = k;

        if (len < k || strncmp(line, key, k) != 0)
                return NULL;
        while (e < len && line[e] != ' ')
                e++;
        return strndup(line + k, e - k);
}

/* Reason=TEXT [user@time]: TEXT, the rest of the line. */
static char *reason_value(const char *line, size_t len) {
        const char *p = line + strlen("Reason=");
        size_t n = len - strlen("Reason=");
        const char *open = NULL;

        while (n > 0 && p[n - 1] == ' ')
                n--;
        if (n > 0 && p[n - 1] == ']')
                for (size_t i = n; i-- > 0;)
                        if (p[i] == '[') {
                                open = p + i;
                                break;
                        }
        if (open && open > p && open[-1] == ' ' && memchr(open, '@', (size_t) (p + n - open)))
                n = (size_t) (open - 1 - p);
        return n > 0 ? strndup(p, n) : NULL;
}

static int split_partitions(const char *v, char ***ret) {
        _cleanup_strv_free_ char **l = NULL;

        for (const char *p = v; *p;) {
                size_t w = strcspn(p, ",");
                if (w > 0) {
                        _cleanup_free_ char *s = strndup(p, w);
                        if (!s || strv_push(&l, s) < 0)
                                return -ENOMEM;
                        s = NULL;
                }
                p += w;
                p += *p == ',';
        }
        *ret = TAKE_PTR(l);
        return 0;
}

/* One line of a record (leading blanks gone) into @n. */
static int parse_line(HealthNode *n, const char *line, size_t len) {
        _cleanup_free_ char *v = NULL;

        if (len >= 7 && strncmp(line, "Reason=", 7) == 0) {
                free(n->reason);
                n->reason = reason_value(line, len);
                return 0;
        }
        if (len >= 8 && strncmp(line, "Comment=", 8) == 0)
                return 0;
        if (!n->state && (v = line_value(line, len, "State="))) {
                n->state = TAKE_PTR(v);
                return 0;
        }
        if (!n->partitions && (v = line_value(line, len, "Partitions=")))
                return split_partitions(v, &n->partitions);
        return 0;
}

int health_nodes_parse(const char *text, HealthNode **ret, size_t *ret_n) {
        HealthNode *nodes = NULL, *cur = NULL;
        size_t n = 0;
        bool any_text = false;
        int r = 0;

        for (const char *p = text; *p && r >= 0;) {
                size_t len = strcspn(p, "\n");
                const char *line = p;

                p += len;
                p += *p == '\n';
                while (len > 0 && (*line == ' ' || *line == '\t'))
                        line++, len--;
                if (len == 0)
                        continue;
                any_text = true;
                if (len >= 9 && strncmp(line, "NodeName=", 9) == 0) {
                        HealthNode *nn;
                        if (n >= NODES_MAX) {
                                r = -E2BIG;
                                break;
                        }
                        nn = reallocarray(nodes, n + 1, sizeof(*nodes));
                        if (!nn) {
                                r = -ENOMEM;
                                break;
                        }
                        nodes = nn;
                        cur = &nodes[n++];
                        *cur = (HealthNode){ .name = line_value(line, len, "NodeName=") };
                        if (!cur->name)
                                r = -ENOMEM;
                        continue;
                }
                if (cur)
                        r = parse_line(cur, line, len);
        }
        if (r >= 0 && n == 0 && any_text)
                r = -EBADMSG;
        if (r < 0) {
                health_nodes_free(nodes, n);
                return r;
        }
        *ret = nodes;
        *ret_n = n;
        return 0;
}
