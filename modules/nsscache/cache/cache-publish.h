/* Publishing rendered maps where libnss-cache and sshd read them.  Non-logging. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <time.h>

#include "cache-format.h"
#include "nss-maps.h"

/* cache_publish() refused a map by a guard; *ret_error says which and why. */
#define CACHE_PUBLISH_REFUSED (-ECANCELED)

typedef struct CachePerms {
        mode_t mode; /* 0: as nsscache: copy /etc/MAP's mode, else 0644 (sshkey 0444) */
        uid_t uid;   /* (uid_t)-1: as nsscache: /etc/MAP's owner if it exists, else leave */
        gid_t gid;
} CachePerms;

typedef struct CacheOptions {
        const char *dir;                      /* where MAP.SUFFIX goes: "/etc" for libnss-cache */
        const char *suffix;                   /* files_cache_filename_suffix; "" or NULL: none */
        const char *map_suffix[_NSS_MAP_MAX]; /* a map's own suffix ("": none); NULL: @suffix */
        bool enabled[_NSS_MAP_MAX];
        const char *timestamp_dir;        /* timestamp-MAP-{update,modify}; NULL: none */
        const char *compat_dir;           /* where nsscache copies modes from; NULL: "/etc" */
        size_t min_entries[_NSS_MAP_MAX]; /* refuse fewer entries (0: only "empty") */
        unsigned max_shrink_pct;          /* refuse losing more than this % of entries; >=100: off */
        bool force;                       /* this run only: skip the guards */
        CachePerms perms[_NSS_MAP_MAX];
        time_t now;            /* for the timestamp files; 0: time(NULL) */
        const char *state_dir; /* where the publish journal goes; NULL: none (no crash safety) */
} CacheOptions;

typedef struct CacheMapReport {
        bool enabled;
        bool changed;       /* new files were put in place */
        bool had_old;       /* a data file existed before */
        size_t entries;     /* lines in the new data */
        size_t old_entries; /* lines in the data file found */
        size_t bytes;
} CacheMapReport;

typedef struct CacheReport {
        CacheMapReport map[_NSS_MAP_MAX];
        size_t n_changed;
        int timestamp_error;    /* first failure writing a timestamp file (not fatal), or 0 */
        bool recovered;         /* an interrupted publish was finished first */
        unsigned stale_removed; /* temporary files of killed runs removed */
        bool journal_pending;   /* failed halfway: the journal finishes it next time */
} CacheReport;

/** cache_options_init() - defaults: dir "/etc", suffix "cache", passwd, shadow, group and sshkey,
 * no timestamp dir, max_shrink_pct 50, nsscache's permissions. */
void cache_options_init(CacheOptions *opts);

/**
 * cache_publish() - render, check and atomically install the enabled maps.
 * @opts:       where and how; see CacheOptions
 * @maps:       the validated maps of one refresh
 * @ret_report: what happened per map (may be NULL)
 * @ret_error:  a malloc'ed reason on failure (may be NULL)
 *
 * All maps and indexes are written to temp files beside their targets and
 * every guard is checked before any target is touched.  A map whose data and indexes are
 * byte-identical to what is on disk (with the same mode and owner) is left
 * alone.  First a publish that a crash or failure interrupted is finished
 * (cache_publish_recover(), with @opts->state_dir) and temporary files
 * killed runs left are removed (cache_publish_clean_stale()).  The changed
 * maps are staged next to their targets as .sunkd-NAME.XXXXXX and fsync'ed;
 * only if all staging succeeded is the journal written to @opts->state_dir
 * and are they put in place, per map: the old indexes are removed, the data
 * is renamed over, then the new indexes.  On success, timestamp-MAP-update
 * is written for every enabled map and timestamp-MAP-modify for each changed
 * one (or where it is missing).
 *
 * Return: 0 (the report says what changed); CACHE_PUBLISH_REFUSED when a
 * guard refused (nothing written); -EINVAL/-EILSEQ for entries that cannot
 * be rendered (nothing written); another negative errno if finishing an
 * earlier publish failed (nothing written), staging or the journal failed
 * (nothing changed) or, rarely, a rename failed twice after others
 * succeeded: the journal then stays, and the next publish or start
 * finishes it before anything else.
 */
int cache_publish(const CacheOptions *opts, const NssMaps *maps, CacheReport *ret_report, char **ret_error);

/**
 * cache_publish_formatted() - cache_publish() for maps already rendered
 * entry by entry; @maps[t] (of type t) is taken for every enabled map t:
 * its bytes, or the temp file they were spilled to (cache_publish_spill()),
 * which is renamed into place or removed.
 * A map that recorded a rendering error fails the publish with that error,
 * as cache_publish() would have for the same entries; one whose temp file
 * could not be written fails as staging does.
 */
int cache_publish_formatted(const CacheOptions *opts, CacheFormatted maps[static _NSS_MAP_MAX],
                            CacheReport *ret_report, char **ret_error);

/**
 * cache_publish_unchanged() - what cache_publish_formatted() does for maps
 * the caller knows to be byte-identical to the files (@known: the report of
 * the publish that found them so): temporary files of killed runs are
 * removed and the timestamp files written; nothing else is touched.  Call
 * only when no journal is pending.  *ret_report is filled as a publish that
 * changed nothing fills it.
 * Return: 0, or the error of removing a stale temporary file.
 */
int cache_publish_unchanged(const CacheOptions *opts, const CacheReport *known, CacheReport *ret_report,
                            char **ret_error);

/**
 * cache_publish_inputs() - the files a publish with @opts reads, besides
 * the new maps: *ret_contents the data and index files it compares them
 * with, *ret_perms those it copies mode and owner from.  NULL-terminated
 * lists (NULL when empty).
 * Return: 0 or -ENOMEM.
 */
int cache_publish_inputs(const CacheOptions *opts, char ***ret_contents, char ***ret_perms);

/**
 * cache_publish_spill() - give the empty map @f a temp file beside its
 * target (.sunkd-NAME.XXXXXX) that its text goes to as it is rendered, so a
 * refresh holds one chunk of each map in memory, not the maps.
 * cache_publish_formatted() publishes from that file (renames it into
 * place if the map changed); cache_formatted_done() removes it otherwise.
 * Return: 0, -EBUSY if @f is not empty or already spilled, or the error of
 * creating the file.
 */
int cache_publish_spill(const CacheOptions *opts, CacheFormatted *f);

/**
 * cache_publish_count_entries() - lines in an existing cache file (0 if absent).
 * Return: 0, or negative errno other than -ENOENT.
 */
int cache_publish_count_entries(const char *path, size_t *ret);

/**
 * cache_publish_pending() - whether @state_dir holds the journal of an
 * interrupted publish (one access(): cheap enough for the event loop).
 * Return: 1, 0, or a negative errno.
 */
int cache_publish_pending(const char *state_dir);

/**
 * cache_publish_recover() - finish a publish that a crash interrupted.
 * If @state_dir holds a journal, its renames are carried out (those already
 * done are skipped) and it is removed.  A malformed journal is removed
 * unapplied: the files it names stay as they are.
 * Return: 0 (*ret_finished says whether there was one to finish), -EBADMSG
 * for a malformed journal, or the failure, with the file in *ret_error.
 */
int cache_publish_recover(const char *state_dir, bool *ret_finished, char **ret_error);

/**
 * cache_publish_clean_stale() - remove temporary files killed runs left in
 * @opts->dir: regular files owned by root whose name is
 * .sunkd-TARGET.XXXXXX for a TARGET this publisher writes.  Call only when
 * no journal is pending (cache_publish_recover() first).
 * Return: 0 or the first error; *ret_removed counts the files removed.
 */
int cache_publish_clean_stale(const CacheOptions *opts, unsigned *ret_removed);

/** cache_publish_automount_path() - DIR/FILE[.SUFFIX] of the automount map's file @file (auto.NAME). */
char *cache_publish_automount_path(const CacheOptions *opts, const char *file);

/** cache_publish_path() - DIR/MAP[.SUFFIX] as nsscache names it (the automount map: auto.master), malloc'ed;
 * NULL on OOM. */
char *cache_publish_path(const CacheOptions *opts, NssMapType t);
