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
#include <stdint.h>

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
        char *key; /* set on the values of a map */
        unsigned key_line, key_column;
        char *value;         /* CONF_SCALAR */
        bool plain;          /* unquoted scalar: "null", "~" and "" mean absent */
        bool module_section; /* a section under modules:, where the host keys live */
        bool names_file;     /* parsed as a file that is part of the configuration ... */
        uint64_t file_id;    /* ... which stat() described so (conf_node_note_file()) */
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
/**
 * conf_node_equal() - whether @a and @b say the same: node types, keys,
 * scalar text and quoting, children in order, and the files they name as
 * conf_node_note_file() saw them when each was parsed (a value parsed as a
 * file on one side only counts as different); not where they are in the
 * file (another section growing moves them).  The keys of the two maps
 * named in @skip (NULL-terminated, may be NULL) are left out, at the top
 * level only.
 */
bool conf_node_equal(const ConfNode *a, const ConfNode *b, const char *const *skip);
/**
 * conf_node_note_file() - @n names @path, a file whose contents are part of
 * the configuration (a SUNKD_CFG_SECRET's "file:", a SUNKD_CFG_RELOAD_FILE
 * path): remember what stat() says of it now (device, inode, size, times,
 * or the errno), for conf_node_equal() to compare.  Called as the key is
 * parsed, on the loop, where the module reads the file anyway.
 */
void conf_node_note_file(const ConfNode *n, const char *path);
/** conf_node_error() - format "file:line:column: key 'k': <fmt>" for @n. */
char *conf_node_error(const ConfNode *n, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
