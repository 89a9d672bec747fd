/* HS256 tokens for Slurm's auth/jwt (slurmrestd's X-SLURM-USER-TOKEN,
 * scontrol's SLURM_JWT), minted from the key slurmctld verifies them with:
 * jwt_hs256.key, read as raw bytes at each mint (32 random bytes as a rule;
 * a NUL byte or a trailing newline is part of the key, never stripped, as
 * Slurm reads it).  That key mints a token for any user, root included, so
 * it is refused unless owned by root or SlurmUser and closed to group and
 * others, and its bytes are wiped after each use.  Claims as `scontrol
 * token` writes them: `iat`, `exp` and `sun`, the user.  Non-logging; no
 * state between calls, so it may run on a worker or in a child. */
#pragma once

#include <stdint.h>
#include <sys/types.h>

/* The largest key file read. */
#define HEALTH_JWT_KEY_MAX (64 * 1024)
#define HEALTH_JWT_USER_MAX 256

/**
 * health_jwt_mint() - a token for @user, issued at @now (seconds since the
 * epoch) and valid for @lifetime seconds, signed with the key in @key_file.
 * @slurm_uid: SlurmUser's uid, which may own the key besides root;
 *             (uid_t) -1 for root only.
 * The key file (symlinks followed, as in a Kubernetes Secret volume) must be
 * a regular file owned by root or @slurm_uid with no group or other
 * permission bits, 1 to HEALTH_JWT_KEY_MAX bytes.
 * Return: 0 and the token ("header.claims.signature", base64url without
 * padding) in *ret; -EINVAL for an empty or unprintable @user or a zero
 * @lifetime; else a negative errno with a message naming the file (its
 * owner and mode when refused) in *ret_error (may be NULL).
 */
int health_jwt_mint(const char *key_file, uid_t slurm_uid, const char *user, uint64_t now, uint64_t lifetime,
                    char **ret, char **ret_error);

/**
 * health_jwt_key_check() - the checks health_jwt_mint() makes of @key_file,
 * the key read and wiped: for the config to be refused when it is read, not
 * at the first drain.  Return: as health_jwt_mint().
 */
int health_jwt_key_check(const char *key_file, uid_t slurm_uid, char **ret_error);
