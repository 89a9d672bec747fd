/* Map deltas: the lines a map lost and gained between two generations.
 *
 * A node that holds a map's previous generation fetches only what changed:
 * for one user changed in a directory of 100k, a few hundred bytes instead
 * of megabytes.  The text form is
 *
 *   sunkd-map-delta 1
 *   @K D A         a hunk: at line K (from 0) of the old map D lines go, A come
 *   -LINE          D of them, exactly as the old map has them (checked)
 *   +LINE          A of them
 *
 * with hunks in ascending, non-overlapping order.  A delta applied to any
 * map but the one it was made from fails on a removed line, and the caller
 * checks the result against the digest the manifest signs anyway: a delta
 * can make a node fetch the whole map, never publish something else.
 *
 * Lines are paired the way patience diff pairs them: lines found exactly
 * once in each map are matched, the longest chain of matches in the same
 * order is kept and grown by equal neighbours; O(n log n) whatever changed,
 * so a full rotation costs no more than a one-line change to compute.
 * Non-logging.
 */
#pragma once

#include <stddef.h>

#define MAP_DELTA_MAGIC "sunkd-map-delta 1\n"

/**
 * map_delta_make() - the delta that turns @old into @new, at most @max bytes.
 * Return: 0 with the text in *@ret (NUL-terminated, the NUL not counted in
 * *@ret_len); -EINVAL when either map is not whole lines (a last line
 * without its newline), -E2BIG when the delta would be over @max bytes,
 * -ENOMEM.
 */
int map_delta_make(const char *old, size_t olen, const char *new, size_t nlen, size_t max, char **ret,
                   size_t *ret_len);

/**
 * map_delta_apply() - @base with the delta @delta applied, at most @max bytes.
 * Return: 0 with the map in *@ret (NUL-terminated); -EBADMSG for a delta
 * that is malformed or not made from @base (*@ret_error says at which line
 * of the delta), -EFBIG when the result would be over @max, -ENOMEM.
 */
int map_delta_apply(const char *base, size_t blen, const char *delta, size_t dlen, size_t max, char **ret,
                    size_t *ret_len, char **ret_error);
