/* Uniform random numbers for splay and jitter.  Non-logging, thread-safe. */
#pragma once

#include <stdint.h>

/** random_u64() - 64 random bits from getrandom(), never blocking. */
uint64_t random_u64(void);

/** random_range() - uniform in [lo, hi] (inclusive); lo when hi <= lo. */
uint64_t random_range(uint64_t lo, uint64_t hi);
