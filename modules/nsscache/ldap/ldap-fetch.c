/* The ldap source's searches, with OpenLDAP's libldap. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include <lber.h>
#include <ldap.h>

#include "curl-common.h"
#include "ldap-fetch.h"
#include "util/cleanup.h"
#include "util/errloc.h"
#include "util/macro.h"

/* The maps auto.master may name: a search each. */
#define LDAP_AUTOMOUNT_MAPS_MAX 1000

/* Pages that bring no entry in a row before a server is taken to loop. */
#define LDAP_EMPTY_PAGES_MAX 16

void ldap_run_done(LdapRun *run) {
        for (NssMapType t = 0; t < _NSS_MAP_MAX; t++)
                ldap_entries_done(run->maps + t);
        for (size_t i = 0; i < run->n_automount; i++) {
                free(run->automount[i].dn);
                ldap_entries_done(&run->automount[i].e);
        }
        free(run->automount);
        run->automount = NULL;
        run->n_automount = 0;
}

static void ldap_unbindp(LDAP **ld) {
        if (*ld)
                (void) ldap_unbind_ext_s(*ld, NULL, NULL);
}

static void ldap_msgfreep(LDAPMessage **m) {
        if (*m)
                (void) ldap_msgfree(*m);
}

/* nsscache's _SetDefaults(): an ldapi:// socket path is URL-escaped whole. */
static char *uri_fixed(const char *uri) {
        static const char hex[] = "0123456789ABCDEF";
        const char *p;
        char *s, *d;

        if (strncmp(uri, "ldapi://", 8) != 0)
                return strdup(uri);
        p = uri + 8;
        s = malloc(8 + strlen(p) * 3 + 1);
        if (!s)
                return NULL;
        memcpy(s, "ldapi://", 8);
        d = s + 8;
        for (; *p; p++)
                if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
                    strchr("_.-~", *p))
                        *d++ = *p;
                else {
                        *d++ = '%';
                        *d++ = hex[(unsigned char) *p >> 4];
                        *d++ = hex[(unsigned char) *p & 15];
                }
        *d = 0;
        return s;
}

/* Whether an error is the connection's (down, cut, timed out): retried. */
static bool transient(int rc) {
        return rc == LDAP_SERVER_DOWN || rc == LDAP_CONNECT_ERROR || rc == LDAP_TIMEOUT ||
               rc == LDAP_TIMELIMIT_EXCEEDED || rc == LDAP_BUSY || rc == LDAP_UNAVAILABLE;
}

/* "Can't contact LDAP server (the diagnostic)" */
static int ld_error(LDAP *ld, int rc, char **ret_error, const char *what, const char *uri) {
        char *diag = NULL;
        int r;

        if (ld)
                (void) ldap_get_option(ld, LDAP_OPT_DIAGNOSTIC_MESSAGE, &diag);
        r = rc == LDAP_INVALID_CREDENTIALS || rc == LDAP_INAPPROPRIATE_AUTH ||
                            rc == LDAP_STRONG_AUTH_REQUIRED || rc == LDAP_CONFIDENTIALITY_REQUIRED
                    ? -EACCES
            : transient(rc) || rc == LDAP_CONNECT_ERROR ? -EIO
                                                        : -EINVAL;
        (void) errmsg_set(ret_error, r, "%s: %s: %s%s%s%s", uri, what, ldap_err2string(rc),
                          diag && *diag ? " (" : "", diag && *diag ? diag : "", diag && *diag ? ")" : "");
        ldap_memfree(diag);
        return r;
}

static int tls_require(const char *v) {
        static const struct {
                const char *name;
                int value;
        } table[] = {
                { "never", LDAP_OPT_X_TLS_NEVER },   { "hard", LDAP_OPT_X_TLS_HARD },
                { "demand", LDAP_OPT_X_TLS_DEMAND }, { "allow", LDAP_OPT_X_TLS_ALLOW },
                { "try", LDAP_OPT_X_TLS_TRY },
        };

        for (size_t i = 0; v && i < ELEMENTSOF(table); i++)
                if (streq(v, table[i].name))
                        return table[i].value;
        return LDAP_OPT_X_TLS_DEMAND;
}

static int scope_of(const char *s) {
        if (streq_ptr(s, "base"))
                return LDAP_SCOPE_BASE;
        if (streq_ptr(s, "sub") || streq_ptr(s, "subtree"))
                return LDAP_SCOPE_SUBTREE;
        return LDAP_SCOPE_ONELEVEL; /* nsscache's default, "one" */
}

static int connect_bind(const NsscacheConf *c, const char *uri, LDAP **ret, char **ret_error) {
        _cleanup_(ldap_unbindp) LDAP *ld = NULL;
        _cleanup_erase_ char *password = NULL;
        struct timeval tv = { (time_t) (c->timeout_usec / SUNKD_USEC_PER_SEC),
                              (suseconds_t) (c->timeout_usec % SUNKD_USEC_PER_SEC) };
        int version = LDAP_VERSION3, zero = 0;
        /* tls_verify: false in sunkd.yaml is ldap_tls_require_cert = never, unless that is set */
        int req = !c->tls_verify && !c->ldap_tls_require_cert ? LDAP_OPT_X_TLS_NEVER
                                                              : tls_require(c->ldap_tls_require_cert);
        const struct {
                int opt;
                const char *v;
        } files[] = {
                { LDAP_OPT_X_TLS_CACERTFILE, c->ldap_tls_cacertfile },
                { LDAP_OPT_X_TLS_CACERTDIR, c->ldap_tls_cacertdir },
                { LDAP_OPT_X_TLS_CERTFILE, c->ldap_tls_certfile },
                { LDAP_OPT_X_TLS_KEYFILE, c->ldap_tls_keyfile },
        };
        struct berval cred = {};
        int rc, r;

        rc = ldap_initialize(&ld, uri);
        if (rc != LDAP_SUCCESS)
                return ld_error(NULL, rc, ret_error, "cannot use the URI", uri);
        if (ldap_set_option(ld, LDAP_OPT_PROTOCOL_VERSION, &version) != LDAP_OPT_SUCCESS ||
            ldap_set_option(ld, LDAP_OPT_REFERRALS, LDAP_OPT_OFF) != LDAP_OPT_SUCCESS ||
            ldap_set_option(ld, LDAP_OPT_NETWORK_TIMEOUT, &tv) != LDAP_OPT_SUCCESS ||
            ldap_set_option(ld, LDAP_OPT_TIMEOUT, &tv) != LDAP_OPT_SUCCESS ||
            ldap_set_option(ld, LDAP_OPT_X_TLS_REQUIRE_CERT, &req) != LDAP_OPT_SUCCESS)
                return errmsg_set(ret_error, -EINVAL, "%s: cannot set the connection's options", uri);
        for (size_t i = 0; i < ELEMENTSOF(files); i++)
                if (files[i].v && ldap_set_option(ld, files[i].opt, files[i].v) != LDAP_OPT_SUCCESS)
                        return errmsg_set(ret_error, -EINVAL, "%s: cannot use '%s' for TLS", uri,
                                          files[i].v);
        /* the options above apply to this handle's own TLS context */
        if (ldap_set_option(ld, LDAP_OPT_X_TLS_NEWCTX, &zero) != LDAP_OPT_SUCCESS)
                return ld_error(ld, LDAP_LOCAL_ERROR, ret_error, "cannot set up TLS", uri);
        if (c->ldap_tls_starttls) {
                rc = ldap_start_tls_s(ld, NULL, NULL);
                if (rc != LDAP_SUCCESS)
                        return ld_error(ld, rc, ret_error, "StartTLS failed", uri);
        }
        r = nsscache_conf_ldap_password(c, &password, ret_error);
        if (r < 0)
                return r;
        cred.bv_val = password;
        cred.bv_len = password ? strlen(password) : 0;
        rc = ldap_sasl_bind_s(ld, c->ldap_bind_dn ?: "", LDAP_SASL_SIMPLE, &cred, NULL, NULL, NULL);
        if (rc != LDAP_SUCCESS) {
                _cleanup_free_ char *what = NULL;
                if (asprintf(&what, "bind as '%s' refused", c->ldap_bind_dn ?: "") < 0)
                        return -ENOMEM;
                return ld_error(ld, rc, ret_error, what, uri);
        }
        *ret = TAKE_PTR(ld);
        return 0;
}

/* One entry of a page into @e. */
static int take_entry(LDAP *ld, LDAPMessage *msg, LdapEntries *e, char **ret_error) {
        BerElement *ber = NULL;
        LdapEntry *en;
        char *dn = ldap_get_dn(ld, msg);
        int r;

        r = ldap_entries_push(e, dn ?: "", &en);
        ldap_memfree(dn);
        if (r < 0)
                return r;
        for (char *a = ldap_first_attribute(ld, msg, &ber); a && r >= 0;
             a = ldap_next_attribute(ld, msg, ber)) {
                struct berval **vals = ldap_get_values_len(ld, msg, a);

                for (size_t i = 0; vals && vals[i] && r >= 0; i++) {
                        if (vals[i]->bv_len > LDAP_VALUE_MAX) {
                                en->oversized = true;
                                continue;
                        }
                        e->bytes += vals[i]->bv_len + strlen(a) + 32;
                        r = ldap_entry_add_value(e, en, a, vals[i]->bv_val, vals[i]->bv_len);
                }
                ldap_value_free_len(vals);
                ldap_memfree(a);
        }
        if (ber)
                ber_free(ber, 0);
        return r;
}

/* What one search asks for. */
typedef struct LdapSearch {
        const char *what; /* the map, for errors */
        const char *base;
        int scope;
        const char *filter;
        const char *const *attrs;
} LdapSearch;

/* One search, page by page, into @e. */
static int search_paged_at(LDAP *ld, const NsscacheConf *c, const LdapSearch *q, const char *uri,
                           const sunkd_cancel *cancel, LdapEntries *e, uint64_t *total,
                           NsscacheFetchStats *stats, char **ret_error) {
        struct berval *cookie = NULL;
        struct timeval limit = { (time_t) (c->ldap_timelimit > 0 ? c->ldap_timelimit : 0), 0 };
        unsigned empty = 0;
        int r = 0;

        for (;;) {
                _cleanup_(ldap_msgfreep) LDAPMessage *res = NULL;
                LDAPControl *page = NULL, *ctrls[2] = {}, **sctrls = NULL, *pr;
                struct berval *next = NULL;
                ber_int_t estimate = 0;
                size_t before = e->n;
                uint64_t bytes = e->bytes;
                char *errmsg = NULL;
                int rc, err = LDAP_SUCCESS;

                if (sunkd_cancelled(cancel)) {
                        r = errmsg_set(ret_error, -ECANCELED, "%s: cancelled", uri);
                        break;
                }
                rc = ldap_create_page_control(ld, (ber_int_t) c->page_size, cookie, 1, &page);
                if (rc != LDAP_SUCCESS) {
                        r = ld_error(ld, rc, ret_error, "cannot page the search", uri);
                        break;
                }
                ctrls[0] = page;
                rc = ldap_search_ext_s(ld, q->base, q->scope, q->filter, (char **) q->attrs, 0, ctrls, NULL,
                                       c->ldap_timelimit > 0 ? &limit : NULL, LDAP_NO_LIMIT, &res);
                ldap_control_free(page);
                stats->requests++;
                /* nsscache: a base that is not there is an empty map */
                if (rc == LDAP_NO_SUCH_OBJECT)
                        break;
                if (rc != LDAP_SUCCESS) {
                        _cleanup_free_ char *what = NULL;
                        if (asprintf(&what, "%s search of '%s' %s", q->what, q->base,
                                     rc == LDAP_SIZELIMIT_EXCEEDED
                                             ? "hit the server's size limit although paged"
                                             : "failed") < 0)
                                return -ENOMEM;
                        r = ld_error(ld, rc, ret_error, what, uri);
                        break;
                }
                for (LDAPMessage *m = ldap_first_entry(ld, res); m && r >= 0; m = ldap_next_entry(ld, m))
                        r = take_entry(ld, m, e, ret_error);
                if (r < 0)
                        break;
                stats->pages++;
                stats->resources += e->n - before;
                stats->bytes += e->bytes - bytes;
                *total += e->bytes - bytes;
                if (*total > LDAP_FETCH_BYTES_MAX) {
                        r = errmsg_set(ret_error, -EFBIG, "%s: the directory is larger than %llu MiB", uri,
                                       (unsigned long long) (LDAP_FETCH_BYTES_MAX >> 20));
                        break;
                }
                rc = ldap_parse_result(ld, res, &err, NULL, &errmsg, NULL, &sctrls, 0);
                ldap_memfree(errmsg);
                pr = rc == LDAP_SUCCESS ? ldap_control_find(LDAP_CONTROL_PAGEDRESULTS, sctrls, NULL) : NULL;
                if (pr && !(next = ber_memcalloc(1, sizeof(*next)))) {
                        ldap_controls_free(sctrls);
                        r = -ENOMEM;
                        break;
                }
                if (pr)
                        rc = ldap_parse_pageresponse_control(ld, pr, &estimate, next);
                ldap_controls_free(sctrls);
                if (cookie)
                        ber_bvfree(cookie);
                cookie = next;
                if (rc != LDAP_SUCCESS || !cookie || !cookie->bv_val || cookie->bv_len == 0)
                        break;
                empty = e->n == before ? empty + 1 : 0;
                if (empty > LDAP_EMPTY_PAGES_MAX) {
                        r = errmsg_set(ret_error, -EIO, "%s: %s search: %u pages in a row brought no entry",
                                       uri, q->what, empty);
                        break;
                }
        }
        if (cookie)
                ber_bvfree(cookie);
        return r;
}

/* One map's search, as its section says. */
static int search_paged(LDAP *ld, const NsscacheConf *c, NssMapType t, const char *uri,
                        const sunkd_cancel *cancel, LdapEntries *e, uint64_t *total,
                        NsscacheFetchStats *stats, char **ret_error) {
        const ScimMapConf *mc = c->map + t;

        return search_paged_at(ld, c,
                               &(LdapSearch){ nss_map_to_string(t), mc->ldap_base, scope_of(mc->ldap_scope),
                                              mc->ldap_filter, ldap_map_attrs(c, t) },
                               uri, cancel, e, total, stats, ret_error);
}

/* As nsscache's GetAutomountMasterMap(): the auto.master automountMap
 * under the map's ldap_base (the last one found), its automount entries
 * one level under it, then each map they name, one level under its base
 * (each base once). */
static int fetch_automount(LDAP *ld, const NsscacheConf *c, const char *uri, const sunkd_cancel *cancel,
                           LdapRun *run, uint64_t *total, NsscacheFetchStats *stats, char **ret_error) {
        static const char *const no_attrs[] = { LDAP_NO_ATTRS, NULL };
        const char *base = c->map[NSS_MAP_AUTOMOUNT].ldap_base;
        _cleanup_(ldap_entries_done) LdapEntries found = {};
        const LdapEntries *master = run->maps + NSS_MAP_AUTOMOUNT;
        int r;

        r = search_paged_at(ld, c,
                            &(LdapSearch){ "automount", base, LDAP_SCOPE_SUBTREE,
                                           "(&(objectclass=automountMap)(ou=auto.master))", no_attrs },
                            uri, cancel, &found, total, stats, ret_error);
        if (r < 0)
                return r;
        if (found.n == 0)
                return errmsg_set(ret_error, -ENOENT, "%s: no automountMap ou=auto.master under '%s'", uri,
                                  base);
        r = search_paged_at(ld, c,
                            &(LdapSearch){ "automount", found.entries[found.n - 1].dn, LDAP_SCOPE_ONELEVEL,
                                           "(objectclass=automount)", ldap_map_attrs(c, NSS_MAP_AUTOMOUNT) },
                            uri, cancel, run->maps + NSS_MAP_AUTOMOUNT, total, stats, ret_error);
        for (size_t i = 0; r >= 0 && i < master->n; i++) {
                const LdapAttr *info = ldap_entry_get(master->entries + i, "automountInformation");
                _cleanup_free_ char *dn = NULL;
                LdapAutomountMap *maps;
                bool seen = false;

                if (!info || info->n == 0 || ldap_automount_location(info->vals[0], &dn) < 0)
                        continue; /* rejected when mapped */
                for (size_t k = 0; k < run->n_automount && !seen; k++)
                        seen = streq(run->automount[k].dn, dn);
                if (seen)
                        continue;
                if (run->n_automount >= LDAP_AUTOMOUNT_MAPS_MAX)
                        return errmsg_set(ret_error, -EFBIG, "%s: auto.master names more than %d maps", uri,
                                          LDAP_AUTOMOUNT_MAPS_MAX);
                maps = reallocarray(run->automount, run->n_automount + 1, sizeof(LdapAutomountMap));
                if (!maps)
                        return -ENOMEM;
                run->automount = maps;
                maps[run->n_automount] = (LdapAutomountMap){ .dn = TAKE_PTR(dn) };
                r = search_paged_at(ld, c,
                                    &(LdapSearch){ "automount", maps[run->n_automount].dn,
                                                   LDAP_SCOPE_ONELEVEL, "(objectclass=automount)",
                                                   ldap_map_attrs(c, NSS_MAP_AUTOMOUNT) },
                                    uri, cancel, &maps[run->n_automount].e, total, stats, ret_error);
                run->n_automount++;
        }
        return r;
}

static int fetch_once(const NsscacheConf *c, const char *uri, const sunkd_cancel *cancel, LdapRun *run,
                      NsscacheFetchStats *stats, char **ret_error) {
        _cleanup_(ldap_unbindp) LDAP *ld = NULL;
        uint64_t total = 0;
        int r;

        ldap_run_done(run);
        r = connect_bind(c, uri, &ld, ret_error);
        for (NssMapType t = 0; t < _NSS_MAP_MAX && r >= 0; t++)
                if (c->map_enabled[t])
                        r = t == NSS_MAP_AUTOMOUNT
                                    ? fetch_automount(ld, c, uri, cancel, run, &total, stats, ret_error)
                                    : search_paged(ld, c, t, uri, cancel, run->maps + t, &total, stats,
                                                   ret_error);
        return r;
}

int ldap_fetch(const NsscacheConf *c, const sunkd_cancel *cancel, LdapRun *run, NsscacheFetchStats *stats,
               char **ret_error) {
        _cleanup_free_ char *uri = uri_fixed(c->ldap_uri ?: "");
        uint64_t start = curl_now_usec();
        int r = -EIO;

        if (!uri)
                return -ENOMEM;
        for (int64_t attempt = 1; attempt <= c->ldap_retry_max; attempt++) {
                if (attempt > 1) {
                        stats->retries++;
                        if (curl_backoff_sleep(cancel, c->ldap_retry_delay_usec) < 0) {
                                r = errmsg_set(ret_error, -ECANCELED, "%s: cancelled", uri);
                                break;
                        }
                        if (ret_error) {
                                free(*ret_error);
                                *ret_error = NULL;
                        }
                }
                r = fetch_once(c, uri, cancel, run, stats, ret_error);
                if (r != -EIO)
                        break;
        }
        stats->duration_usec += curl_now_usec() - start;
        return r;
}
