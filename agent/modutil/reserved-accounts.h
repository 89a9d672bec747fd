/* System account names and ids that no directory may hand out, even on a
 * node whose own passwd and group files lack them (a minimal image, a
 * package installed later).  One list for every module that must refuse
 * them: nsscache never publishes them, authkeys never serves their keys.
 * Non-logging. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Whether the @len bytes at @name are a reserved name or start with a
 * reserved prefix ("systemd-", "_"); compared byte for byte, as NSS does. */
bool reserved_account_name(const char *name, size_t len);

/* Whether @id is root's, or nobody's and the 16-bit -1 some tools still
 * take for "no id". */
bool reserved_account_id(uint32_t id);

/* The list itself, in strcmp() order, for tests and documentation. */
extern const char *const reserved_account_names[];
extern const size_t reserved_account_names_count;
