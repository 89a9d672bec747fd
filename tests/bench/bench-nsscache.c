/* bench-nsscache: one nsscache refresh, measured.
 *
 * Usage: bench-nsscache -k TOKEN_FILE -d FILES_DIR -u BASE_URL NSSCACHE_CONF
 *
 * Runs what the module's refresh job runs on its worker thread
 * (nsscache_refresh_run(): fetch, map and render, then index and publish)
 * once, into FILES_DIR, and prints
 *   wall_ms=N cpu_ms=N peak_rss_kb=N base_rss_kb=N requests=N passwd=N group=N
 * where base_rss_kb is the resident size before the refresh and
 * peak_rss_kb the high-water mark after it.  Exit 1 on failure.
 */
#include <curl/curl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "modules/nsscache/nsscache-refresh.h"
#include "util/cleanup.h"

static uint64_t now_usec(clockid_t clock) {
        struct timespec ts;

        clock_gettime(clock, &ts);
        return (uint64_t) ts.tv_sec * 1000000 + (uint64_t) ts.tv_nsec / 1000;
}

/* A "VmXXX:   N kB" line of /proc/self/status, in kB; 0 if absent. */
static uint64_t proc_status_kb(const char *key) {
        _cleanup_fclose_ FILE *f = fopen("/proc/self/status", "re");
        char line[256];
        size_t n = strlen(key);

        while (f && fgets(line, sizeof(line), f))
                if (strncmp(line, key, n) == 0 && line[n] == ':')
                        return strtoull(line + n + 1, NULL, 10);
        return 0;
}

static int load_conf(const char *path, const char *token_file, const char *dir, const char *url,
                     NsscacheConf **ret) {
        _cleanup_(nsscache_conf_freep) NsscacheConf *c = NULL;
        _cleanup_free_ char *err = NULL, *text = NULL;
        int r;

        r = nsscache_conf_new(&c);
        if (r < 0)
                return r;
        r = nsscache_conf_load_ini(c, path, &err);
        if (r >= 0 &&
            asprintf(&text, "[DEFAULT]\nfiles_dir=%s\ntimestamp_dir=%s/timestamps\nscim_base_url=%s\n", dir,
                     dir, url) < 0)
                r = -ENOMEM;
        if (r >= 0)
                r = nsscache_conf_parse_ini(c, text, strlen(text), "bench", &err);
        if (r >= 0 && !(c->token_file = strdup(token_file)))
                r = -ENOMEM;
        if (r >= 0)
                r = nsscache_conf_finalize(c, &err);
        if (r < 0) {
                fprintf(stderr, "bench-nsscache: %s\n", err ?: strerror(-r));
                return r;
        }
        *ret = TAKE_PTR(c);
        return 0;
}

int main(int argc, char *argv[]) {
        _cleanup_(nsscache_conf_freep) NsscacheConf *c = NULL;
        _cleanup_free_ char *err = NULL;
        const char *token = NULL, *dir = NULL, *url = NULL;
        NsscacheFetchStats stats = {};
        CacheReport report = {};
        CacheOptions opts;
        uint64_t wall, cpu, base;
        int r, opt;

        while ((opt = getopt(argc, argv, "k:d:u:")) >= 0)
                switch (opt) {
                case 'k':
                        token = optarg;
                        break;
                case 'd':
                        dir = optarg;
                        break;
                case 'u':
                        url = optarg;
                        break;
                default:
                        return 2;
                }
        if (optind + 1 != argc || !token || !dir || !url) {
                fprintf(stderr, "usage: bench-nsscache -k TOKEN_FILE -d DIR -u URL NSSCACHE_CONF\n");
                return 2;
        }
        if (load_conf(argv[optind], token, dir, url, &c) < 0)
                return 1;
        if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
                return 1;

        base = proc_status_kb("VmRSS");
        wall = now_usec(CLOCK_MONOTONIC);
        cpu = now_usec(CLOCK_PROCESS_CPUTIME_ID);
        nsscache_refresh_options(c, false, &opts);
        r = nsscache_refresh_run(c, &opts, NULL, NULL, NULL, NULL, &stats, &report, &err);
        wall = now_usec(CLOCK_MONOTONIC) - wall;
        cpu = now_usec(CLOCK_PROCESS_CPUTIME_ID) - cpu;
        curl_global_cleanup();
        if (r < 0) {
                fprintf(stderr, "bench-nsscache: refresh failed: %s\n", err ?: strerror(-r));
                return 1;
        }
        printf("wall_ms=%" PRIu64 " cpu_ms=%" PRIu64 " peak_rss_kb=%" PRIu64 " base_rss_kb=%" PRIu64
               " requests=%" PRIu64 " passwd=%zu group=%zu\n",
               wall / 1000, cpu / 1000, proc_status_kb("VmHWM"), base, stats.requests,
               report.map[NSS_MAP_PASSWD].entries, report.map[NSS_MAP_GROUP].entries);
        return 0;
}
