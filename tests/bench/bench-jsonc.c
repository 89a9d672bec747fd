/* bench-jsonc: what json-c alone costs for the pages of a refresh.
 *
 * Usage: bench-jsonc FILE...
 *
 * Reads every FILE (the bodies a refresh fetched) into memory first, then
 * parses each into a json-c tree and frees it, as the module does with
 * each page (scim_json_parse_with(), one tokener for all), and prints
 *   parse_ms=N pages=N bytes=N
 * with the CPU time of the parsing alone.  Exit 1 if a body does not parse.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "modules/nsscache/scim/scim-page.h"
#include "util/cleanup.h"
#include "util/fileio.h"
#include "util/json-util.h"
#include "util/time-util.h"

typedef struct {
        char *data;
        size_t len;
} Body;

static void bodies_free(Body *b, int n) {
        for (int i = 0; i < n; i++)
                free(b[i].data);
        free(b);
}

int main(int argc, char *argv[]) {
        _cleanup_tokener_ json_tokener *tok = NULL;
        Body *bodies;
        uint64_t bytes = 0, t;
        int n = argc - 1, r = 0;

        if (n < 1) {
                fprintf(stderr, "usage: bench-jsonc FILE...\n");
                return 2;
        }
        bodies = calloc(n, sizeof(Body));
        tok = scim_json_tokener_new();
        if (!bodies || !tok)
                return 1;
        for (int i = 0; i < n && r >= 0; i++) {
                r = fileio_read(argv[i + 1], 1 << 30, &bodies[i].data, &bodies[i].len);
                if (r < 0)
                        fprintf(stderr, "bench-jsonc: %s: %s\n", argv[i + 1], strerror(-r));
                bytes += bodies[i].len;
        }
        t = now_usec(CLOCK_PROCESS_CPUTIME_ID);
        for (int i = 0; i < n && r >= 0; i++) {
                _cleanup_free_ char *err = NULL;
                json_object *root;

                r = scim_json_parse_with(tok, bodies[i].data, bodies[i].len, &root, &err);
                if (r < 0)
                        fprintf(stderr, "bench-jsonc: %s: %s\n", argv[i + 1], err ?: strerror(-r));
                else
                        json_object_put(root);
        }
        t = now_usec(CLOCK_PROCESS_CPUTIME_ID) - t;
        bodies_free(bodies, n);
        if (r < 0)
                return 1;
        printf("parse_ms=%.1f pages=%d bytes=%" PRIu64 "\n", t / 1000.0, n, bytes);
        return 0;
}
