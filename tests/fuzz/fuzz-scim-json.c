/* Fuzz target: one SCIM ListResponse body through the fetch's pre-scan, the page parser and the
 * mapper, as Users and as Groups, with the seed's attribute layout. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "modules/nsscache/scim-fetch.h"
#include "modules/nsscache/scim-map.h"
#include "util/cleanup.h"
#include "../lib/nsscache-seed.h"

#define CW SEED_CW

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char conf_text[] =
        "[DEFAULT]\n"
        "scim_base_url=https://scim.example/v2\n"
        SEED_OTHER_MAPS
        "[passwd]\n"
        "scim_override_home_directory=/mnt/home/%%u\n"
        SEED_PASSWD_PATHS;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_(nsscache_conf_freep) ScimConfig *c = NULL;
        _cleanup_(scim_map_freep) ScimMapper *m = NULL;
        _cleanup_free_ char *err = NULL;
        ScimPage p = { 0 };
        NssMaps maps = { 0 };

        if (nsscache_conf_new(&c) < 0 ||
            nsscache_conf_parse_ini(c, conf_text, strlen(conf_text), "fuzz", &err) < 0 ||
            nsscache_conf_finalize(c, &err) < 0)
                __builtin_trap();
        /* the fetch's pre-scan sees every input, whatever the parser makes of it */
        {
                _cleanup_free_ char *e = NULL;
                ScimPage q = { 0 };

                if (scim_fetch_page_parse((const char *) data, size, 10000, &q, &e) >= 0)
                        scim_map_page_done(&q);
        }
        if (scim_map_new(c, &m) < 0)
                return 0;
        if (scim_map_page_parse((const char *) data, size, &p, &err) < 0)
                return 0;
        (void) scim_map_add_users(m, p.resources);
        (void) scim_map_add_groups(m, p.resources);
        scim_map_page_done(&p);
        scim_map_take(m, &maps);
        nss_maps_done(&maps);

        /* the same bytes as an nsscache.conf */
        {
                _cleanup_(nsscache_conf_freep) ScimConfig *c2 = NULL;
                _cleanup_free_ char *e2 = NULL;

                if (nsscache_conf_new(&c2) >= 0 &&
                    nsscache_conf_parse_ini(c2, (const char *) data, size, "fuzz", &e2) >= 0)
                        (void) nsscache_conf_finalize(c2, &e2);
        }
        return 0;
}
