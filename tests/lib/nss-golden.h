/* The nsscache golden data set, as NssMaps (tests only). */
#pragma once

#include "cache/nss-maps.h"

/**
 * nss_golden_build() - fill *ret with data set @variant.
 * Variant 0 is the golden set (tests/data/nsscache/golden/derive.py holds
 * the same entries); variant 1 has the same names with longer gecos fields
 * plus extra users, so every offset moves between the two.  Variant 2 is
 * variant 0 plus a second "sunkt-dave" line (uid 9998) at the end.
 * Return: 0 or -ENOMEM (with *ret freed and zeroed).
 */
int nss_golden_build(unsigned variant, NssMaps *ret);
