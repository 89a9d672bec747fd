/* Fuzz target: an sshkey cache file through the map builder under small
 * caps, then every kept key back through the parser (valid, and UTF-8
 * throughout) and a lookup. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "modules/authkeys/authkeys-map.h"
#include "util/cleanup.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void count_drop(const AuthkeysDrop *d, void *userdata) {
        size_t *n = userdata;

        if (!authkeys_line_error_to_string(d->line_error) || !authkeys_reject_to_string(d->reject))
                __builtin_trap();
        (*n)++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static const AuthkeysMapLimits limits = {
                .max_line = 4096,
                .max_keys_per_user = 4,
                .max_users = 64,
                .max_file_size = 1 << 20,
        };
        _cleanup_(authkeys_map_freep) AuthkeysMap *m = NULL;
        AuthkeysMatch match = {};
        size_t drops = 0;

        if (authkeys_map_build_mem(data, size, &limits, count_drop, &drops, &m) < 0)
                return 0;
        /* Every name the input could hold is a line prefix; probe the first one. */
        for (size_t i = 0; i < size && i <= AUTHKEYS_MAP_NAME_MAX; i++) {
                char name[AUTHKEYS_MAP_NAME_MAX + 1];
                size_t n;
                int h;

                if (data[i] != ':')
                        continue;
                memcpy(name, data, i);
                name[i] = 0;
                h = authkeys_map_lookup(m, name, &n);
                for (size_t k = 0; h >= 0 && k < n; k++) {
                        AuthkeysMapKey key = authkeys_map_key(m, h, k);
                        AuthkeysKey parsed;

                        /* valid, and UTF-8 throughout: it is served in a JSON string */
                        if (authkeys_key_parse(key.line, key.len, &parsed) != AUTHKEYS_OK ||
                            parsed.comment_not_utf8)
                                __builtin_trap();
                        (void) authkeys_map_key_matches(key, &match);
                }
                break;
        }
        return 0;
}
