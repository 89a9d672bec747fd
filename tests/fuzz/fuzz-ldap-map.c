/* Fuzz target: the entries of a hostile LDAP directory through the ldap
 * source's mapping (modules/nsscache/ldap/ldap-map.h).  The first byte picks
 * the schema (bit 0: ldap_ad, bit 1: ldap_rfc2307bis, bit 2:
 * ldap_nested_groups); the rest is entries as lines "attr: value" (any
 * bytes but a newline; "dn: " starts an entry), each entry given to the
 * maps (passwd, shadow, group, sshkey, netgroup) as a search would give
 * it, and to the automount map as auto.master and as the map its first
 * location names.  Never a crash or a leak, never an
 * error but -ENOMEM; every entry kept renders again. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "modules/nsscache/cache/cache-format.h"
#include "modules/nsscache/ldap/ldap-map.h"
#include "modules/nsscache/mapper.h"
#include "modules/nsscache/nsscache-conf.h"
#include "tests/lib/scim-collect.h"
#include "util/cleanup.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void entries_read(const char *p, const char *end, LdapEntries *e) {
        LdapEntry *en = NULL;

        while (p < end) {
                const char *nl = memchr(p, '\n', (size_t) (end - p)) ?: end;
                const char *colon = memchr(p, ':', (size_t) (nl - p));

                if (colon && colon > p) {
                        char name[64];
                        size_t n = (size_t) (colon - p) < sizeof(name) - 1 ? (size_t) (colon - p)
                                                                           : sizeof(name) - 1;
                        const char *v = colon + 1 + (colon + 1 < nl && colon[1] == ' ');

                        memcpy(name, p, n);
                        name[n] = 0;
                        if (strcmp(name, "dn") == 0 || !en) {
                                _cleanup_free_ char *dn = strndup(v, (size_t) (nl - v));
                                if (!dn || ldap_entries_push(e, dn, &en) < 0)
                                        __builtin_trap();
                        }
                        if (strcmp(name, "dn") != 0 &&
                            ldap_entry_add_value(e, en, name, v, (size_t) (nl - v)) < 0)
                                __builtin_trap();
                }
                p = nl + 1;
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_(nsscache_conf_freep) NsscacheConf *c = NULL;
        _cleanup_free_ char *err = NULL, *text = NULL;
        LdapEntries e = {};
        ScimCollect col = {};
        MapSink sink = scim_collect_sink(&col);
        Mapper *m = NULL;
        NssMaps maps = {};
        unsigned mode = size > 0 ? data[0] : 0;

        if (asprintf(&text,
                     "[DEFAULT]\nsource = ldap\ncache = files\nmaps = passwd, shadow, group, sshkey, "
                     "automount, "
                     "netgroup\n"
                     "files_dir = /tmp\ntimestamp_dir = /tmp\nldap_uri = ldap://127.0.0.1\n"
                     "ldap_base = dc=x\nldap_filter = (uid=*)\nldap_ad = %u\nldap_rfc2307bis = %u\n"
                     "[group]\nldap_nested_groups = %u\n",
                     mode & 1, (mode >> 1) & 1, (mode >> 2) & 1) < 0 ||
            nsscache_conf_new(&c) < 0 || nsscache_conf_parse_ini(c, text, strlen(text), "f", &err) < 0 ||
            nsscache_conf_finalize(c, &err) < 0)
                __builtin_trap();
        if (size > 0)
                entries_read((const char *) data + 1, (const char *) data + size, &e);
        if (mapper_new(c, &sink, &m) < 0)
                __builtin_trap();
        for (NssMapType t = 0; t < _NSS_MAP_MAX; t++)
                if (t != NSS_MAP_AUTOMOUNT && ldap_map_add(m, c, t, &e) < 0)
                        __builtin_trap();
        /* automount: the entries as auto.master, and as the map the first location names */
        for (size_t i = 0; i < e.n; i++) {
                const LdapAttr *a = ldap_entry_get(e.entries + i, "automountInformation");
                _cleanup_free_ char *dn = NULL;

                if (a && a->n > 0 && ldap_automount_location(a->vals[0], &dn) == 0) {
                        if (ldap_map_automount(m, c, &e, &(LdapAutomountMap){ .dn = dn, .e = e }, 1) < 0)
                                __builtin_trap();
                        break;
                }
        }
        if (mapper_finish(m) < 0)
                __builtin_trap();
        scim_collect_take(&col, &maps);
        for (NssMapType t = 0; t < _NSS_MAP_MAX; t++) {
                _cleanup_free_ char *buf = NULL, *msg = NULL;
                size_t len = 0, n = 0;

                if (cache_format_render(&maps, t, &buf, &len, &n, &msg) < 0 || n != nss_maps_count(&maps, t))
                        __builtin_trap();
        }
        nss_maps_done(&maps);
        mapper_free(m);
        scim_collect_done(&col);
        ldap_entries_done(&e);
        return 0;
}
