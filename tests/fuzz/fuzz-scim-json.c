/* Fuzz target: one SCIM ListResponse body through the fetch's pre-scan, the page parser and the
 * mapper, as Users and as Groups, with the seed's attribute layout. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "modules/nsscache/scim/scim-fetch.h"
#include "modules/nsscache/scim/scim-map.h"
#include "modules/nsscache/scim/scim-page.h"
#include "modules/nsscache/scim/scim-spc.h"
#include "util/cleanup.h"
#include "../lib/nsscache-seed.h"
#include "../lib/scim-collect.h"

#define CW SEED_CW

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char conf_text[] = "[DEFAULT]\n"
                                "scim_base_url=https://scim.example/v2\n" SEED_OTHER_MAPS "[passwd]\n"
                                "scim_override_home_directory=/mnt/home/%%u\n" SEED_PASSWD_PATHS;

/* The rendering sink, displaced entries cut out, gives byte for byte what
 * rendering the collecting sink's maps gives. */
static void formatted_agrees(const NsscacheConf *c, struct json_object *resources, Mapper *collected,
                             ScimCollect *col) {
        CacheFormatted text[_NSS_MAP_MAX];
        MapSink render = map_sink_formatted(text);
        Mapper *f = NULL;
        NssMaps maps = { 0 };
        bool ok;

        for (NssMapType t = 0; t < _NSS_MAP_MAX; t++)
                cache_formatted_init(text + t, t);
        ok = mapper_new(c, &render, &f) >= 0 && scim_map_add_users(f, resources) >= 0 &&
             scim_map_add_groups(f, resources) >= 0 && mapper_finish(f) >= 0 &&
             mapper_finish(collected) >= 0;
        mapper_free(f);
        scim_collect_take(col, &maps);
        for (NssMapType t = 0; ok && t < _NSS_MAP_MAX; t++) {
                _cleanup_free_ char *buf = NULL, *err = NULL;
                size_t len = 0, n = 0;

                if (cache_format_render(&maps, t, &buf, &len, &n, &err) < 0 || text[t].error != 0 ||
                    text[t].buf.len != len || text[t].entries != n ||
                    (len > 0 && memcmp(text[t].buf.data, buf, len) != 0))
                        __builtin_trap();
        }
        for (NssMapType t = 0; t < _NSS_MAP_MAX; t++)
                cache_formatted_done(text + t);
        nss_maps_done(&maps);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_(nsscache_conf_freep) NsscacheConf *c = NULL;
        ScimCollect col = {};
        MapSink collect = scim_collect_sink(&col);
        _cleanup_(mapper_freep) Mapper *m = NULL;
        _cleanup_free_ char *err = NULL;
        ScimPage p = { 0 };

        if (nsscache_conf_new(&c) < 0 ||
            nsscache_conf_parse_ini(c, conf_text, strlen(conf_text), "fuzz", &err) < 0 ||
            nsscache_conf_finalize(c, &err) < 0)
                __builtin_trap();
        /* the fetch's pre-scan sees every input, whatever the parser makes of
         * it, with the tokener the fetch keeps for a whole run: it parses this
         * input after whatever the last one left it with */
        {
                static struct json_tokener *tok;
                _cleanup_free_ char *e = NULL;
                ScimPage q = { 0 };

                if (!tok && !(tok = scim_json_tokener_new()))
                        __builtin_trap();
                if (scim_page_parse_bounded(tok, (const char *) data, size, 10000, 0, &q, &e) >= 0)
                        scim_page_done(&q);
        }
        /* the same bytes as a cursor page, and as a ServiceProviderConfig */
        {
                _cleanup_free_ char *e = NULL, *e2 = NULL;
                ScimPagination pg;
                ScimPage q = { 0 };

                if (scim_page_parse_bounded(NULL, (const char *) data, size, 10000, SCIM_PAGE_CURSOR, &q,
                                            &e) >= 0) {
                        if (q.next_cursor && strlen(q.next_cursor) > SCIM_CURSOR_MAX)
                                __builtin_trap();
                        scim_page_done(&q);
                }
                (void) scim_spc_parse((const char *) data, size, &pg, &e2);
        }
        if (mapper_new(c, &collect, &m) < 0)
                return 0;
        if (scim_page_parse((const char *) data, size, 0, &p, &err) >= 0) {
                (void) scim_map_add_users(m, p.resources);
                (void) scim_map_add_groups(m, p.resources);
                formatted_agrees(c, p.resources, m, &col);
                scim_page_done(&p);
        }
        m = mapper_free(m);
        scim_collect_done(&col);

        /* the same bytes as an nsscache.conf */
        {
                _cleanup_(nsscache_conf_freep) NsscacheConf *c2 = NULL;
                _cleanup_free_ char *e2 = NULL;

                if (nsscache_conf_new(&c2) >= 0 &&
                    nsscache_conf_parse_ini(c2, (const char *) data, size, "fuzz", &e2) >= 0)
                        (void) nsscache_conf_finalize(c2, &e2);
        }
        return 0;
}
