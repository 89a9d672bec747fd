/* A log rate limit: at most a burst of messages per interval, the rest
 * counted and reported with the next message let through.  Non-logging. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

typedef struct Ratelimit {
        uint64_t begin;
        unsigned n;
        unsigned suppressed;
} Ratelimit;

/**
 * ratelimit_pass() - whether one more message may go out now: at most
 * @burst per @interval_usec (CLOCK_MONOTONIC), the interval starting at the
 * first message.  Return: true with the number suppressed since the last
 * one let through in *@ret_suppressed (then reset); false, counted, when
 * the burst is spent.
 */
bool ratelimit_pass(Ratelimit *rl, uint64_t interval_usec, unsigned burst, unsigned *ret_suppressed);
