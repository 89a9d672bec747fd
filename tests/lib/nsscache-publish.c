/* Test helper: publish a golden data set with cache_publish().
 *
 *   nsscache-publish [-d DIR] [-t TIMESTAMP_DIR] [-f] [-n COUNT] VARIANT
 *
 * Publishes variant VARIANT (0, 1 or 2, see nss-golden.h) into DIR (default
 * /etc, where libnss-cache reads).  With -n COUNT it publishes COUNT times,
 * alternating between the two variants starting with VARIANT, which is what
 * the concurrency test runs against live readers.  Exit 0 on success, 1 with
 * the reason on stderr otherwise.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "util/cleanup.h"

#include "../../modules/nsscache/cache-publish.h"
#include "nss-golden.h"

int main(int argc, char *argv[]) {
        NssMaps maps[3] = {};
        CacheOptions opts;
        unsigned long count = 1, variant;
        int c, r;

        cache_options_init(&opts);
        opts.max_shrink_pct = 100;
        while ((c = getopt(argc, argv, "d:t:fn:")) >= 0)
                switch (c) {
                case 'd':
                        opts.dir = optarg;
                        break;
                case 't':
                        opts.timestamp_dir = optarg;
                        break;
                case 'f':
                        opts.force = true;
                        break;
                case 'n':
                        count = strtoul(optarg, NULL, 10);
                        break;
                default:
                        return 2;
                }
        if (optind + 1 != argc) {
                fprintf(stderr, "usage: %s [-d DIR] [-t TIMESTAMP_DIR] [-f] [-n COUNT] VARIANT\n", argv[0]);
                return 2;
        }
        variant = strtoul(argv[optind], NULL, 10) % 3;

        for (unsigned v = 0; v < 3; v++)
                if (nss_golden_build(v, maps + v) < 0) {
                        fprintf(stderr, "out of memory\n");
                        return 1;
                }

        r = 0;
        for (unsigned long i = 0; i < count && r == 0; i++) {
                _cleanup_free_ char *err = NULL;
                CacheReport rep;

                /* with -n, alternate between variant and its partner (0 <-> 1) */
                unsigned long v = i % 2 == 0 ? variant : variant == 1 ? 0 : 1;

                r = cache_publish(&opts, maps + v, &rep, &err);
                if (r < 0)
                        fprintf(stderr, "publish %lu failed: %s (%d)\n", i, err ?: "", r);
        }

        for (unsigned v = 0; v < 3; v++)
                nss_maps_done(maps + v);
        return r < 0 ? 1 : 0;
}
