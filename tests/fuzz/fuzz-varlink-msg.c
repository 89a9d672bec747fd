/* Fuzz target for the Varlink codec: one input is one frame as a peer could
 * send it.  Whatever parses must split into a call or be refused cleanly,
 * and must survive a format/parse round trip unchanged. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "proto/varlink.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        json_object *msg = NULL, *back = NULL, *params = NULL;
        const char *method = NULL;
        char *s = NULL;
        size_t len = 0;

        if (varlink_parse((const char *) data, size, 64 * 1024, 16, &msg) < 0)
                return 0;
        if (varlink_format(msg, &s, &len) < 0 || varlink_parse(s, len - 1, 128 * 1024, 16, &back) < 0 ||
            !json_object_equal(msg, back))
                abort();
        (void) varlink_parse_call(msg, &method, &params);
        json_object_put(back);
        json_object_put(msg);
        free(s);
        return 0;
}
