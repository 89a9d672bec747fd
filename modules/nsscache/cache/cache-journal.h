/* The publish journal: every map or none, across a crash.  Non-logging. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* Staged files are named CACHE_JOURNAL_TMP_PREFIX + the target's name +
 * ".XXXXXX" (mkstemp), in the target's directory: ".sunkd-passwd.cache.a1B2c3". */
#define CACHE_JOURNAL_TMP_PREFIX ".sunkd-"
#define CACHE_JOURNAL_TMP_RANDOM 6
/* The journal's name in the module's state directory. */
#define CACHE_JOURNAL_FILE "publish-journal"
/* A journal lists at most this many files (4 maps, 2 indexes each). */
#define CACHE_JOURNAL_MAX 12

typedef enum CacheJournalKind {
        CACHE_JOURNAL_DATA,  /* a staged data file; starts a map's group */
        CACHE_JOURNAL_INDEX, /* a staged index of the group's map */
        CACHE_JOURNAL_DROP,  /* an index of the group's map that goes away */
        _CACHE_JOURNAL_KIND_MAX,
} CacheJournalKind;

typedef struct CacheJournalEntry {
        CacheJournalKind kind;
        char *name; /* DATA, INDEX: the staged file's name; DROP: the index's */
} CacheJournalEntry;

typedef struct CacheJournal {
        char *dir; /* where the caches are */
        CacheJournalEntry entry[CACHE_JOURNAL_MAX];
        size_t n;
} CacheJournal;

/**
 * cache_publish_test_hook - failure injection for the tests; NULL otherwise.
 * Called before each step of a publish with the step's name ("stage",
 * "journal", "unlink-index", "rename-data", "rename-index", "drop-index",
 * "journal-remove", "timestamp") and the file it acts on; a negative errno
 * fails that step as if its system call had.
 */
extern int (*cache_publish_test_hook)(const char *step, const char *path);

/** cache_journal_step() - run the test hook for @step on @path, if set.  Return: 0 or its error. */
int cache_journal_step(const char *step, const char *path);

void cache_journal_done(CacheJournal *j);

/** cache_journal_add() - append an entry (@name copied).  Return: 0, -E2BIG, -EINVAL (a '/' or newline),
 * -ENOMEM. */
int cache_journal_add(CacheJournal *j, CacheJournalKind kind, const char *name);

/**
 * cache_journal_target() - the target's name for staged file @staged.
 * Return: 0 with the malloc'ed name, -EINVAL if @staged is not a staged name, -ENOMEM.
 */
int cache_journal_target(const char *staged, char **ret);

/** cache_journal_is_staged() - whether @name has the form of a staged file's name. */
bool cache_journal_is_staged(const char *name);

/** cache_journal_write() - write @j to @path durably (temp, fsync, rename, fsync of the directory). */
int cache_journal_write(const CacheJournal *j, const char *path);

/**
 * cache_journal_read() - parse the journal at @path.
 * Return: 0, -ENOENT if there is none, -EBADMSG if malformed, -EFBIG, or another negative errno.
 */
int cache_journal_read(const char *path, CacheJournal *ret);

/**
 * cache_journal_apply() - carry out @j; idempotent, so it also finishes an
 * interrupted run.  Per map: if its data is still staged, its old indexes
 * are removed, the data renamed into place and then its staged indexes;
 * if the data is in place already, only what remains staged is renamed and
 * the dropped indexes removed.  Every rename is followed by an fsync of the
 * directory before the journal may go.
 * Return: 0, or the first failure with "FILE: reason" in *ret_error.
 */
int cache_journal_apply(const CacheJournal *j, char **ret_error);
