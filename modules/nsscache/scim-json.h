/* A read-only JSON tree for SCIM pages, in one arena per page.
 *
 * The mapper reads pages through this tree, not through json-c: a page of
 * 100 users is some 4000 values, and json-c spends most of a refresh
 * allocating (a hash table per object, a copy per key) and freeing them.
 * A ScimJson is 16 bytes in an arena freed at once.
 *
 * scim_json_parse() builds the tree directly, but only for a strict subset
 * of JSON: anything it is not sure json-c reads the same way (escapes in
 * keys, \u0000, surrogates, control characters, numbers that are not
 * short integers, duplicate keys, large objects, deep nesting, stray
 * bytes) makes it answer -EAGAIN, and the caller asks json-c instead and
 * converts json-c's tree with scim_json_from_jsonc().  So every page means
 * exactly what it meant to json-c.  Non-logging.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct json_object;

/* The same order as json-c's json_type. */
typedef enum ScimJsonType {
        SCIM_JSON_NULL,
        SCIM_JSON_BOOLEAN,
        SCIM_JSON_DOUBLE,
        SCIM_JSON_INT,
        SCIM_JSON_OBJECT,
        SCIM_JSON_ARRAY,
        SCIM_JSON_STRING,
} ScimJsonType;

typedef struct ScimJson ScimJson;
typedef struct ScimJsonMember ScimJsonMember;

struct ScimJson {
        uint32_t type; /* ScimJsonType */
        uint32_t n;    /* string bytes, array elements or object members */
        union {
                int64_t i;                /* SCIM_JSON_INT, as json_object_get_int64() */
                bool b;                   /* SCIM_JSON_BOOLEAN */
                const char *s;            /* SCIM_JSON_STRING: NUL-terminated, may hold NULs */
                const ScimJson *items;    /* SCIM_JSON_ARRAY */
                const ScimJsonMember *members; /* SCIM_JSON_OBJECT, in document order */
        };
};

struct ScimJsonMember {
        const char *key; /* NUL-terminated, no NUL inside */
        size_t key_len;
        ScimJson value;
};

typedef struct ScimJsonDoc ScimJsonDoc;

#define SCIM_JSON_FAST_DEPTH_MAX 24
#define SCIM_JSON_FAST_MEMBERS_MAX 64

/**
 * scim_json_parse() - the tree of the JSON text @buf (@len bytes: an object
 * or array, trailing whitespace allowed).
 * Return: 0; -EAGAIN when the text is outside the subset read here (it may
 * still be valid JSON: ask json-c), -ENOMEM.
 */
int scim_json_parse(const char *buf, size_t len, ScimJsonDoc **ret);

/** scim_json_from_jsonc() - the tree of json-c's @o (copied; @o may be freed after). */
int scim_json_from_jsonc(struct json_object *o, ScimJsonDoc **ret);

const ScimJson *scim_json_root(const ScimJsonDoc *d);
ScimJsonDoc *scim_json_free(ScimJsonDoc *d);
static inline void scim_json_freep(ScimJsonDoc **d) {
        if (*d)
                *d = scim_json_free(*d);
}

/* json_object_is_type(): NULL stands for JSON null, as in json-c. */
static inline bool scim_json_is(const ScimJson *v, ScimJsonType t) {
        return v ? v->type == t : t == SCIM_JSON_NULL;
}

/** scim_json_get() - the member @key (@len bytes) of object @o, or NULL. */
const ScimJson *scim_json_get(const ScimJson *o, const char *key, size_t len);

/** scim_json_equal() - same types, values, keys and order (for tests). */
bool scim_json_equal(const ScimJson *a, const ScimJson *b);
