/* One SCIM ListResponse page: what a body may cost before it is parsed,
 * the strict parse, and the envelope (totalResults, startIndex,
 * itemsPerPage, Resources).  The fetch pages through these; the mapper only
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
        int64_t start_index;    /* -1 if absent */
        int64_t items_per_page; /* -1 if absent */
} ScimPage;

/**
 * scim_page_parse() - parse one ListResponse body.
 * Return: 0; -EBADMSG with a reason in *ret_error for invalid JSON (incl.
 * nesting deeper than SCIM_JSON_DEPTH_MAX, trailing data), a non-object, a
 * missing or negative totalResults, or Resources that is not an array.
 */
int scim_page_parse(const char *buf, size_t len, ScimPage *ret, char **ret_error);
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
 * scim_page_resources_max(@page_size) elements.
 * Return: 0; -EBADMSG (*ret_error says why), -ENOMEM.
 */
int scim_page_parse_bounded(const char *buf, size_t len, int64_t page_size, ScimPage *ret, char **ret_error);

