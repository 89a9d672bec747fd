/* json-c helpers: ownership and member access. */
#pragma once

#include <stdint.h>

#include <json-c/json.h>

static inline void json_object_putp(json_object **o) {
        if (*o)
                json_object_put(*o);
}
#define _cleanup_json_ __attribute__((cleanup(json_object_putp)))

static inline void json_tokener_freep(json_tokener **t) {
        if (*t)
                json_tokener_free(*t);
}
#define _cleanup_tokener_ __attribute__((cleanup(json_tokener_freep)))

/* {"key": "value"}, or NULL on OOM. */
static inline json_object *json_object_new_string_object(const char *key, const char *value) {
        json_object *o = json_object_new_object();

        if (o && json_object_object_add(o, key, json_object_new_string(value)) < 0) {
                json_object_put(o);
                return NULL;
        }
        return o;
}

/* The string member @key of @o, borrowed; NULL if @o is NULL, or the member
 * is missing or not a string. */
static inline const char *json_member_string(json_object *o, const char *key) {
        json_object *v;

        return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string)
                       ? json_object_get_string(v)
                       : NULL;
}

/* The number member @key of @o as an int64 (a double truncated), or @def. */
static inline int64_t json_member_int64(json_object *o, const char *key, int64_t def) {
        json_object *v;

        if (!json_object_object_get_ex(o, key, &v) ||
            !(json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double)))
                return def;
        return json_object_get_int64(v);
}
