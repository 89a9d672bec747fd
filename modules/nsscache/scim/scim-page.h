/* One SCIM ListResponse page: what a body may cost before it is parsed,
 * the strict parse, and the envelope (totalResults, startIndex,
 * itemsPerPage, nextCursor, Resources).  The fetch pages through these; the mapper only
 * ever sees their Resources.  Non-logging.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

struct json_object;

#define SCIM_JSON_DEPTH_MAX 32

/* One parsed ListResponse page. */
typedef struct ScimPage {
        struct json_object *root;
        struct json_object *resources; /* borrowed from root; NULL if absent */
        size_t n_resources;
        int64_t total_results;
        int64_t start_index;     /* -1 if absent */
        int64_t items_per_page;  /* -1 if absent */
        const char *next_cursor; /* RFC 9865; borrowed from root; NULL if absent, null or "" */
} ScimPage;

/* A cursor is echoed into the next URL as it is, so it is held to RFC
 * 9865's alphabet (RFC 3986 unreserved characters) and a length. */
#define SCIM_CURSOR_MAX 1024

typedef enum ScimPageFlags {
        SCIM_PAGE_CURSOR = 1u << 0,        /* cursor pagination: totalResults may be absent (-1) */
        SCIM_PAGE_IGNORE_CURSOR = 1u << 1, /* index pagination only: nextCursor is not looked at */
} ScimPageFlags;

/**
 * scim_json_parse() - a strict json-c parse of a whole body, nesting at
 * most SCIM_JSON_DEPTH_MAX deep.
 * Return: 0; -EBADMSG with a reason in *ret_error (truncated, invalid,
 * trailing data); -ENOMEM.
 */
int scim_json_parse(const char *buf, size_t len, struct json_object **ret, char **ret_error);

/**
 * scim_json_tokener_new() - a tokener for parsing body after body
 * (scim_json_parse_with(), scim_page_parse_bounded()) without allocating
 * its stack each time.  NULL on OOM; free with json_tokener_free().
 */
struct json_tokener *scim_json_tokener_new(void);

/** scim_json_parse_with() - scim_json_parse() with @tok (NULL: a fresh one), reset before and after. */
int scim_json_parse_with(struct json_tokener *tok, const char *buf, size_t len, struct json_object **ret,
                         char **ret_error);

/**
 * scim_page_parse() - parse one ListResponse body.
 * Return: 0; -EBADMSG with a reason in *ret_error for invalid JSON (incl.
 * nesting deeper than SCIM_JSON_DEPTH_MAX, trailing data), a non-object, a
 * missing (unless SCIM_PAGE_CURSOR or the page has a nextCursor) or negative totalResults, Resources
 * that is not an array, or a nextCursor that is not a string of at most
 * SCIM_CURSOR_MAX unreserved characters (unless SCIM_PAGE_IGNORE_CURSOR).
 */
int scim_page_parse(const char *buf, size_t len, unsigned flags, ScimPage *ret, char **ret_error);
void scim_page_done(ScimPage *p);

/* What parsing one page may cost: the json-c tree of a body of n bytes is
 * refused beyond MIN(SCIM_PAGE_PARSE_FACTOR * n + SCIM_PAGE_PARSE_SLACK,
 * SCIM_PAGE_PARSE_MAX) bytes (estimated before parsing).  A group's members
 * ({"value":"u-1","display":"x"}) cost about 20 times their bytes in json-c,
 * hence the factor; the cap holds for any page under SCIM_PAGE_BODY_MAX. */
#define SCIM_PAGE_PARSE_FACTOR 32u
#define SCIM_PAGE_PARSE_SLACK (16u * 1024 * 1024)
#define SCIM_PAGE_PARSE_MAX (1024u * 1024 * 1024)

/** scim_page_resources_max() - the most Resources a page asked for with count=@page_size may hold. */
static inline uint64_t scim_page_resources_max(int64_t page_size) {
        return 2 * (uint64_t) page_size + 16;
}

/**
 * scim_page_parse_bounded() - scim_page_parse() behind a pre-scan that
 * refuses, without building anything, a body whose parsed tree would exceed
 * the budget above or whose Resources array holds more than
 * scim_page_resources_max(@page_size) elements.  @tok: as for
 * scim_json_parse_with().
 * Return: 0; -EBADMSG (*ret_error says why), -ENOMEM.
 */
int scim_page_parse_bounded(struct json_tokener *tok, const char *buf, size_t len, int64_t page_size,
                            unsigned flags, ScimPage *ret, char **ret_error);
