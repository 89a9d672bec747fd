/* Test helper: publish a golden data set with cache_publish().
 *
 *   nsscache-publish [-d DIR] [-t TIMESTAMP_DIR] [-s STATE_DIR] [-f] [-n COUNT]
 *                    [-g GEN] [-K STEP[:N]] [-E STEP[:N]] VARIANT
 *   nsscache-publish -R -s STATE_DIR [-d DIR]
 *
 * Publishes variant VARIANT (0, 1 or 2, see nss-golden.h) into DIR (default
 * /etc, where libnss-cache reads).  With -n COUNT it publishes COUNT times,
 * alternating between the two variants starting with VARIANT, which is what
 * the concurrency test runs against live readers.  -s keeps the publish
 * journal in STATE_DIR.  Exit 0 on success, 1 with the reason on stderr
 * otherwise.
 *
 * For the crash and failure tests:
 *   -g GEN      mark every map with generation GEN: the first user's gecos
 *               is "gen GEN", its shadow lstchg GEN, the first group gains
 *               member sunkgenGEN, the first key the comment genGEN;
 *   -K STEP:N   SIGKILL ourselves at the Nth (default 1st) time the publish
 *               reaches STEP (see cache_publish_test_hook);
 *   -E STEP:N   fail STEP with EIO from its Nth time on;
 *   -R          only finish a journal in STATE_DIR (as sunkd does at start),
 *               then remove stale temporary files from DIR; prints
 *               "finished" or "nothing to finish".
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/cleanup.h"
#include "util/strv.h"

#include "../../modules/nsscache/cache/cache-journal.h"
#include "../../modules/nsscache/cache/cache-publish.h"
#include "nss-golden.h"

static struct {
        char step[64];
        unsigned long at, seen;
        bool kill;
} inject;

static int inject_hook(const char *step, const char *path) {
        if (strcmp(step, inject.step) != 0 || ++inject.seen < inject.at)
                return 0;
        if (inject.kill) {
                fprintf(stderr, "killed at %s %s\n", step, path);
                (void) raise(SIGKILL);
        }
        return -EIO;
}

static int inject_parse(const char *arg, bool kill) {
        const char *colon = strchr(arg, ':');
        size_t n = colon ? (size_t) (colon - arg) : strlen(arg);

        if (n == 0 || n >= sizeof(inject.step))
                return -EINVAL;
        memcpy(inject.step, arg, n);
        inject.step[n] = '\0';
        inject.at = colon ? strtoul(colon + 1, NULL, 10) : 1;
        inject.kill = kill;
        cache_publish_test_hook = inject_hook;
        return 0;
}

static int mark_generation(NssMaps *m, unsigned long gen) {
        char *s;

        if (m->n_passwd == 0 || m->n_group == 0 || m->n_sshkey == 0 || !m->sshkey[0].keys[0])
                return -EINVAL;
        if (asprintf(&s, "gen %lu", gen) < 0)
                return -ENOMEM;
        free(m->passwd[0].gecos);
        m->passwd[0].gecos = s;
        m->shadow[0].lstchg = (int64_t) gen;
        if (asprintf(&s, "sunkgen%lu", gen) < 0 || strv_push(&m->group[0].members, s) < 0)
                return -ENOMEM;
        if (asprintf(&s, "%s gen%lu", m->sshkey[0].keys[0], gen) < 0)
                return -ENOMEM;
        free(m->sshkey[0].keys[0]);
        m->sshkey[0].keys[0] = s;
        return 0;
}

static int recover(const CacheOptions *opts) {
        _cleanup_free_ char *err = NULL;
        unsigned removed;
        bool finished;
        int r;

        r = cache_publish_recover(opts->state_dir, &finished, &err);
        if (r < 0) {
                fprintf(stderr, "recover failed: %s (%d)\n", err ?: "", r);
                return 1;
        }
        r = cache_publish_clean_stale(opts, &removed);
        if (r < 0) {
                fprintf(stderr, "cleaning failed: %s\n", strerror(-r));
                return 1;
        }
        printf("%s\n", finished ? "finished" : "nothing to finish");
        return 0;
}

int main(int argc, char *argv[]) {
        NssMaps maps[3] = {};
        CacheOptions opts;
        unsigned long count = 1, variant, gen = 0;
        bool do_recover = false;
        int c, r;

        cache_options_init(&opts);
        opts.max_shrink_pct = 100;
        while ((c = getopt(argc, argv, "d:t:s:fn:g:K:E:R")) >= 0)
                switch (c) {
                case 'd':
                        opts.dir = optarg;
                        break;
                case 't':
                        opts.timestamp_dir = optarg;
                        break;
                case 's':
                        opts.state_dir = optarg;
                        break;
                case 'f':
                        opts.force = true;
                        break;
                case 'n':
                        count = strtoul(optarg, NULL, 10);
                        break;
                case 'g':
                        gen = strtoul(optarg, NULL, 10);
                        break;
                case 'K':
                case 'E':
                        if (inject_parse(optarg, c == 'K') < 0)
                                return 2;
                        break;
                case 'R':
                        do_recover = true;
                        break;
                default:
                        return 2;
                }
        if (do_recover)
                return opts.state_dir && optind == argc ? recover(&opts) : 2;
        if (optind + 1 != argc) {
                fprintf(stderr,
                        "usage: %s [-d DIR] [-t TIMESTAMP_DIR] [-s STATE_DIR] [-f] [-n COUNT] [-g GEN] "
                        "[-K STEP[:N]] [-E STEP[:N]] VARIANT\n",
                        argv[0]);
                return 2;
        }
        variant = strtoul(argv[optind], NULL, 10) % 3;

        for (unsigned v = 0; v < 3; v++)
                if (nss_golden_build(v, maps + v) < 0 || (gen > 0 && mark_generation(maps + v, gen) < 0)) {
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
                else if (rep.timestamp_error < 0)
                        fprintf(stderr, "timestamp files not written: %s\n", strerror(-rep.timestamp_error));
        }

        for (unsigned v = 0; v < 3; v++)
                nss_maps_done(maps + v);
        return r < 0 ? 1 : 0;
}
