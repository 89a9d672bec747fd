/* A parsed YAML document as a tree that remembers where everything was.
 *
 * struct sunkd_cfg is the node type modules see (opaque to them).  Every node
 * records file, line and column so that any later error, in the host or in
 * a module, can be reported as "file:line:column: key 'x': reason".
 * Non-logging.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "sunkd/module.h"

typedef enum ConfNodeType {
        CONF_SCALAR,
        CONF_SEQUENCE,
        CONF_MAP,
} ConfNodeType;

typedef struct sunkd_cfg ConfNode;

struct sunkd_cfg {
        ConfNodeType type;
        const char *file; /* owned by the ConfTree */
        unsigned line, column;
        char *key;        /* set on the values of a map */
        unsigned key_line, key_column;
        char *value;      /* CONF_SCALAR */
        bool plain;       /* unquoted scalar: "null", "~" and "" mean absent */
        bool module_section; /* a section under modules:, where the host keys live */
        ConfNode **children;
        size_t n_children;
};

typedef struct ConfTree {
        char *file;
        ConfNode *root; /* a CONF_MAP; empty for an empty document */
} ConfTree;

#define CONF_FILE_MAX (1024 * 1024)
#define CONF_DEPTH_MAX 32
#define CONF_NODES_MAX 100000

/**
 * conf_tree_parse() - parse @len bytes of YAML named @file.
 * Only one document; no anchors or aliases (they let a small file expand
 * without bound); keys are scalars and unique; the root is a mapping.
 * Return: 0 and the tree, or -EINVAL with "file:line:column: reason" in
 * *ret_error (malloc'd).
 */
int conf_tree_parse(const char *file, const char *data, size_t len, ConfTree **ret, char **ret_error);
/** conf_tree_load() - read (at most CONF_FILE_MAX bytes) and parse @path. */
int conf_tree_load(const char *path, ConfTree **ret, char **ret_error);
ConfTree *conf_tree_free(ConfTree *t);

const ConfNode *conf_node_get(const ConfNode *map, const char *key);
/** conf_node_error() - format "file:line:column: key 'k': <fmt>" for @n. */
char *conf_node_error(const ConfNode *n, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
