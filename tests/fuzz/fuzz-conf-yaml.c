/* Fuzz target: sunkd.yaml from untrusted bytes.  Any input must give a
 * Config or an error message with a position, never a crash or a leak; a
 * parsed config must also survive a module section walk. */
#include <stdint.h>
#include <stdlib.h>

#include "conf-keys.h"
#include "conf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct Any {
        char *s;
        int64_t i;
        uint64_t d;
        char **l;
} Any;

static const sunkd_cfg_key any_keys[] = {
        { "interval", SUNKD_CFG_DURATION, offsetof(Any, d), 0, 0, 0 },
        { "name", SUNKD_CFG_STRING, offsetof(Any, s), 0, 0, 0 },
        { "count", SUNKD_CFG_INT, offsetof(Any, i), 0, 0, 100 },
        { "list", SUNKD_CFG_LIST, offsetof(Any, l), 0, 0, 0 },
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        Config *c = NULL;
        char *error = NULL;

        if (config_parse("fuzz.yaml", (const char *) data, size, &c, &error) < 0) {
                free(error);
                return 0;
        }
        for (size_t i = 0; i < c->n_modules; i++) {
                Any a = {};
                char *e = NULL;
                (void) conf_keys_parse(c->modules[i].cfg, any_keys, sizeof(any_keys) / sizeof(any_keys[0]),
                                       &a, &e);
                free(e);
                conf_keys_clear(any_keys, sizeof(any_keys) / sizeof(any_keys[0]), &a);
        }
        config_free(c);
        return 0;
}
