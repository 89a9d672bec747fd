/* What a SCIM ServiceProviderConfig (RFC 7643 section 5) says about
 * pagination (RFC 9865 section 4).  Non-logging.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* Real documents are a few KiB; a larger one is not parsed at all. */
#define SCIM_SPC_BODY_MAX (64u * 1024)

typedef struct ScimPagination {
        bool cursor; /* pagination.cursor is true */
        bool index;  /* pagination.index is true, or there is no pagination attribute (RFC 7644 paging) */
} ScimPagination;

/**
 * scim_spc_parse() - the pagination methods a ServiceProviderConfig body advertises.
 * Return: 0; -EBADMSG with a reason in *ret_error for a body over
 * SCIM_SPC_BODY_MAX, invalid JSON (nesting beyond SCIM_JSON_DEPTH_MAX
 * included), a non-object, or a pagination attribute that is not an object
 * of booleans.
 */
int scim_spc_parse(const char *buf, size_t len, ScimPagination *ret, char **ret_error);
