/* json-c ownership helpers. */
#pragma once

#include <json-c/json.h>

static inline void json_object_putp(json_object **o) {
        if (*o)
                json_object_put(*o);
}
#define _cleanup_json_ __attribute__((cleanup(json_object_putp)))

/* {"key": "value"}, or NULL on OOM. */
static inline json_object *json_object_new_string_object(const char *key, const char *value) {
        json_object *o = json_object_new_object();

        if (o && json_object_object_add(o, key, json_object_new_string(value)) < 0) {
                json_object_put(o);
                return NULL;
        }
        return o;
}
