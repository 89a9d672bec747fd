/* The in-memory maps: naming and teardown.
 *
 * A minimal implementation so the SCIM mapper and its tests link on their
 * own; the cache writer extends this file.  NssMaps entries own every string
 * they point to, so nss_maps_done() is the single place that frees them.
 */
#include <stdlib.h>
#include <string.h>

#include "nss-maps.h"
#include "util/macro.h"
#include "util/strv.h"

static const char *const nss_map_table[_NSS_MAP_MAX] = {
        [NSS_MAP_PASSWD] = "passwd",
        [NSS_MAP_SHADOW] = "shadow",
        [NSS_MAP_GROUP] = "group",
        [NSS_MAP_SSHKEY] = "sshkey",
};

const char *nss_map_to_string(NssMapType t) {
        if ((int) t < 0 || t >= _NSS_MAP_MAX)
                return NULL;
        return nss_map_table[t];
}

NssMapType nss_map_from_string(const char *s) {
        if (!s)
                return (NssMapType) -1;
        for (size_t i = 0; i < ELEMENTSOF(nss_map_table); i++)
                if (streq(nss_map_table[i], s))
                        return (NssMapType) i;
        return (NssMapType) -1;
}

size_t nss_maps_count(const NssMaps *m, NssMapType t) {
        const size_t n[_NSS_MAP_MAX] = {
                [NSS_MAP_PASSWD] = m->n_passwd,
                [NSS_MAP_SHADOW] = m->n_shadow,
                [NSS_MAP_GROUP] = m->n_group,
                [NSS_MAP_SSHKEY] = m->n_sshkey,
        };

        if ((int) t < 0 || t >= _NSS_MAP_MAX)
                return 0;
        return n[t];
}

void nss_maps_done(NssMaps *m) {
        if (!m)
                return;
        for (size_t i = 0; i < m->n_passwd; i++) {
                free(m->passwd[i].name);
                free(m->passwd[i].passwd);
                free(m->passwd[i].gecos);
                free(m->passwd[i].dir);
                free(m->passwd[i].shell);
        }
        for (size_t i = 0; i < m->n_shadow; i++) {
                free(m->shadow[i].name);
                free(m->shadow[i].passwd);
        }
        for (size_t i = 0; i < m->n_group; i++) {
                free(m->group[i].name);
                free(m->group[i].passwd);
                strv_free(m->group[i].members);
        }
        for (size_t i = 0; i < m->n_sshkey; i++) {
                free(m->sshkey[i].name);
                strv_free(m->sshkey[i].keys);
        }
        free(m->passwd);
        free(m->shadow);
        free(m->group);
        free(m->sshkey);
        memset(m, 0, sizeof(*m));
}
