/* nsscache's ldap source, fetched: one connection per run (ldap://,
 * ldaps:// or ldapi://, StartTLS on ldap_tls_starttls), a simple bind as
 * ldap_bind_dn (or none), and for each enabled map one search of its
 * ldap_base, ldap_filter and ldap_scope asking for the attributes nsscache
 * asks for, paged by RFC 2696 so a server size limit below the directory's
 * size still gives all of it.  Referrals are not followed; the server's
 * certificate is verified unless ldap_tls_require_cert says otherwise.
 * A connection that fails, drops or times out is retried from the start
 * (ldap_retry_max attempts, ldap_retry_delay apart); a refused bind,
 * filter or search is not.  Blocking: runs in the refresh's worker.
 * Non-logging.
 */
#pragma once

#include "fetch-stats.h"
#include "ldap-map.h"
#include "nsscache-conf.h"
#include "sunkd/module.h"

typedef struct LdapRun {
        LdapEntries maps[_NSS_MAP_MAX]; /* automount: the entries of auto.master */
        LdapAutomountMap *automount;    /* the maps auto.master names, each searched once */
        size_t n_automount;
} LdapRun;

/**
 * ldap_fetch() - search every enabled map of @c into @run.
 * Return: 0; -ECANCELED; -EACCES (bind refused), -EIO (the server, the
 * connection or TLS), -EFBIG (the directory holds more than
 * LDAP_FETCH_BYTES_MAX), -EINVAL (a search refused), with *@ret_error
 * naming the URI and the map.
 */
int ldap_fetch(const NsscacheConf *c, const sunkd_cancel *cancel, LdapRun *run, NsscacheFetchStats *stats,
               char **ret_error);

void ldap_run_done(LdapRun *run);
