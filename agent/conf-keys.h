/* Typed key tables over ConfTree maps: the one place config values are
 * converted and checked, for sunkd.yaml's top level and every module.
 * Non-logging: errors come back as "file:line:column: key 'x': reason".
 */
#pragma once

#include "conf-tree.h"
#include "sunkd/module.h"

/* SUNKD_CFG_SECRET: "file:/path" reads the secret from a file; the default
 * and the highest allowed size of a secret. */
#define CONF_SECRET_FILE_PREFIX "file:"
#define CONF_SECRET_MAX (64 * 1024)
#define CONF_SECRET_LIMIT (1024 * 1024)

/* Keys every module section may carry; the host reads them itself. */
extern const char *const conf_host_keys[];

/**
 * conf_keys_parse() - convert the entries of @map into @out through @keys.
 * Unknown keys (other than conf_host_keys; the nearest known one is
 * suggested), wrong types, values out of range and missing
 * SUNKD_CFG_REQUIRED keys fail with -EINVAL and *ret_error: all of them, past
 * the first, one line each.
 * Values already in @out are replaced (defaults are set by the caller first).
 */
int conf_keys_parse(const ConfNode *map, const sunkd_cfg_key *keys, size_t n_keys, void *out,
                    char **ret_error);
/**
 * conf_keys_check_written() - refuse a SUNKD_CFG_WRITE_PATH value in @out
 * (parsed from @map, or the default left there) that another uid controls,
 * by trusted_path_check(): -EPERM or the lookup's -errno, with
 * "file:line:column: key 'x': refusing to write 'PATH': ..." in *ret_error,
 * a line for each such key.  A value conf_keys_parse() refused is skipped.
 * Apart from conf_keys_parse(), which never touches the file system.
 */
int conf_keys_check_written(const ConfNode *map, const sunkd_cfg_key *keys, size_t n_keys, const void *out,
                            char **ret_error);
/** conf_keys_clear() - free what conf_keys_parse() allocated in @out. */
void conf_keys_clear(const sunkd_cfg_key *keys, size_t n_keys, void *out);

/** conf_parse_bool() - true/false/yes/no/on/off/1/0. */
int conf_parse_bool(const char *s, bool *ret);
