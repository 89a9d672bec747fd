#include <errno.h>
#include <stdint.h>

#include <json-c/json.h>

#include "scim-page.h"
#include "scim-spc.h"
#include "util/errloc.h"
#include "util/json-util.h"

/* A sub-attribute RFC 9865 declares REQUIRED and Boolean; absent is false. */
static int get_flag(json_object *pagination, const char *key, bool *ret, char **ret_error) {
        json_object *v;

        *ret = false;
        if (!json_object_object_get_ex(pagination, key, &v) || json_object_is_type(v, json_type_null))
                return 0;
        if (!json_object_is_type(v, json_type_boolean))
                return errmsg_set(ret_error, -EBADMSG, "pagination.%s is not a boolean", key);
        *ret = json_object_get_boolean(v);
        return 0;
}

int scim_spc_parse(const char *buf, size_t len, ScimPagination *ret, char **ret_error) {
        _cleanup_json_ json_object *root = NULL;
        json_object *pagination;
        ScimPagination p = { .index = true };
        int r;

        if (len > SCIM_SPC_BODY_MAX)
                return errmsg_set(ret_error, -EBADMSG, "larger than %u bytes", SCIM_SPC_BODY_MAX);
        r = scim_json_parse(buf, len, &root, ret_error);
        if (r < 0)
                return r;
        if (!json_object_is_type(root, json_type_object))
                return errmsg_set(ret_error, -EBADMSG, "not a JSON object");
        if (json_object_object_get_ex(root, "pagination", &pagination) &&
            !json_object_is_type(pagination, json_type_null)) {
                if (!json_object_is_type(pagination, json_type_object))
                        return errmsg_set(ret_error, -EBADMSG, "pagination is not an object");
                r = get_flag(pagination, "cursor", &p.cursor, ret_error);
                if (r >= 0)
                        r = get_flag(pagination, "index", &p.index, ret_error);
                if (r < 0)
                        return r;
        }
        *ret = p;
        return 0;
}
