/* scim-dump: nsscache.conf -> SCIM fetch -> maps, printed for TAP tests.
 *
 * Usage: scim-dump [-o key=value]... [--page-size N] [--timeout-ms N] [--pagination auto|index|cursor]
 *                  [--max-total-results N] [--token-file PATH] [--quiet] NSSCACHE_CONF
 * Each -o is applied as a [DEFAULT] line after the file, the way a YAML
 * override would replace one key.  Prints "stats ..." and "count ..." lines,
 * a "note ..." line for each server misbehaviour the run survived,
 * the entries (unless --quiet) and the rejects; on failure "error <ERRNO>
 * <message>" and exit status 1; config errors exit 2.
 */
#include <curl/curl.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "modules/nsscache/nsscache-conf.h"
#include "modules/nsscache/scim/scim-fetch.h"
#include "modules/nsscache/scim/scim-map.h"
#include "util/cleanup.h"
#include "util/strv.h"
#include "scim-collect.h"

static void print_maps(const NssMaps *m) {
        for (size_t i = 0; i < m->n_passwd; i++)
                printf("passwd %s:%s:%u:%u:%s:%s:%s\n", m->passwd[i].name, m->passwd[i].passwd,
                       m->passwd[i].uid, m->passwd[i].gid, m->passwd[i].gecos, m->passwd[i].dir,
                       m->passwd[i].shell);
        for (size_t i = 0; i < m->n_shadow; i++)
                printf("shadow %s:%s\n", m->shadow[i].name, m->shadow[i].passwd);
        for (size_t i = 0; i < m->n_group; i++) {
                printf("group %s:%s:%u:", m->group[i].name, m->group[i].passwd, m->group[i].gid);
                for (char **p = m->group[i].members; p && *p; p++)
                        printf("%s%s", p == m->group[i].members ? "" : ",", *p);
                printf("\n");
        }
        for (size_t i = 0; i < m->n_sshkey; i++)
                for (char **k = m->sshkey[i].keys; k && *k; k++)
                        printf("sshkey %s %s\n", m->sshkey[i].name, *k);
}

int main(int argc, char *argv[]) {
        static const struct option options[] = {
                { "page-size", required_argument, NULL, 'p' },
                { "max-total-results", required_argument, NULL, 'm' },
                { "timeout-ms", required_argument, NULL, 't' },
                { "token-file", required_argument, NULL, 'k' },
                { "quiet", no_argument, NULL, 'q' },
                { "pagination", required_argument, NULL, 'g' },
                {},
        };
        _cleanup_(nsscache_conf_freep) NsscacheConf *c = NULL;
        _cleanup_(scim_collect_done) ScimCollect col = {};
        MapSink sink = scim_collect_sink(&col);
        _cleanup_(mapper_freep) Mapper *m = NULL;
        _cleanup_strv_free_ char **overrides = NULL;
        _cleanup_free_ char *err = NULL;
        NsscacheFetchStats stats = { 0 };
        NssMaps maps = { 0 };
        bool quiet = false;
        int64_t page_size = -1, timeout_ms = -1, max_total = -1;
        const char *token_file = NULL, *pagination = NULL;
        int r, opt;

        while ((opt = getopt_long(argc, argv, "o:", options, NULL)) >= 0)
                switch (opt) {
                case 'o':
                        if (strv_extend(&overrides, optarg) < 0)
                                return 1;
                        break;
                case 'p':
                        page_size = strtoll(optarg, NULL, 10);
                        break;
                case 'm':
                        max_total = strtoll(optarg, NULL, 10);
                        break;
                case 't':
                        timeout_ms = strtoll(optarg, NULL, 10);
                        break;
                case 'k':
                        token_file = optarg;
                        break;
                case 'q':
                        quiet = true;
                        break;
                case 'g':
                        pagination = optarg;
                        break;
                default:
                        return 2;
                }
        if (optind + 1 != argc) {
                fprintf(stderr, "usage: scim-dump [options] NSSCACHE_CONF\n");
                return 2;
        }
        if (nsscache_conf_new(&c) < 0)
                return 1;
        r = nsscache_conf_load_ini(c, argv[optind], &err);
        for (char **o = overrides; r >= 0 && o && *o; o++) {
                _cleanup_free_ char *t = NULL;
                if (asprintf(&t, "[DEFAULT]\n%s\n", *o) < 0)
                        return 1;
                r = nsscache_conf_parse_ini(c, t, strlen(t), "override", &err);
        }
        if (page_size > 0)
                c->page_size = page_size;
        if (max_total > 0)
                c->max_total_results = max_total;
        if (timeout_ms > 0)
                c->timeout_usec = (uint64_t) timeout_ms * 1000;
        if (token_file && !(c->token_file = strdup(token_file)))
                return 1;
        if (pagination) {
                free(c->pagination);
                if (!(c->pagination = strdup(pagination)))
                        return 1;
        }
        if (r >= 0)
                r = nsscache_conf_finalize(c, &err);
        if (r < 0) {
                printf("config-error %s\n", err ?: strerror(-r));
                return 2;
        }

        curl_global_init(CURL_GLOBAL_DEFAULT);
        if (mapper_new(c, &sink, &m) < 0)
                return 1;
        r = scim_fetch_run(c, m, NULL, NULL, &stats, &err);
        for (unsigned bit = 1; bit; bit <<= 1)
                if (stats.notes & bit)
                        printf("note %s\n", scim_fetch_note_to_string(bit));
        printf("stats requests=%" PRIu64 " retries=%" PRIu64 " pages=%" PRIu64 " resources=%" PRIu64
               " bytes=%" PRIu64 " paging=%s\n",
               stats.requests, stats.retries, stats.pages, stats.resources, stats.bytes,
               stats.cursor ? "cursor" : "index");
        if (r < 0) {
                printf("error %s %s\n", strerrorname_np(-r) ?: "?", err ?: "");
                curl_global_cleanup();
                return 1;
        }
        if (mapper_finish(m) < 0)
                return 1;
        scim_collect_take(&col, &maps);
        printf("count passwd=%zu shadow=%zu group=%zu sshkey=%zu rejects=%" PRIu64 "\n", maps.n_passwd,
               maps.n_shadow, maps.n_group, maps.n_sshkey, mapper_rejects(m)->total);
        for (size_t i = 0; i < mapper_rejects(m)->n_records; i++) {
                const MapReject *j = &mapper_rejects(m)->records[i];
                printf("reject %s %s %s %" PRId64 "\n", nss_map_to_string(j->map),
                       map_reject_reason_to_string(j->reason), j->name ?: "-", j->id);
        }
        if (!quiet)
                print_maps(&maps);
        nss_maps_done(&maps);
        curl_global_cleanup();
        return 0;
}
