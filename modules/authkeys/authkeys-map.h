/* An nsscache sshkey cache as an immutable map: user -> valid key lines.
 *
 * The file has one user a line, `name:KEYS`, where KEYS is either one key
 * line as it is (`ada:ssh-ed25519 AAAA... ada@x`), nothing (`ada:`), or the
 * repr() of a Python list of them (`ada:['k1', 'k2']`), which is what
 * nsscache and sunkd's nsscache module write.  Each key goes through
 * authkeys_key_parse(); a refused key is dropped, a line that cannot be read
 * (no colon, broken list, over the line cap, a repeated name, a local
 * account's name) is skipped, and both are counted and reported through a
 * callback.  Going over the
 * user or file size cap fails the whole build, so that a caller keeps the
 * map it had rather than serve a cut-off one.
 *
 * The file is read in chunks: an over-long line is skipped without being
 * held in memory.  A built map is never changed, so one thread may build it
 * while others read the previous one.  Non-logging.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "authkeys-key.h"
#include "authkeys-local.h"

typedef struct AuthkeysMapLimits {
        size_t max_line;            /* bytes of one file line, newline excluded */
        size_t max_keys_per_user;   /* valid keys kept per user; more are dropped */
        size_t max_users;           /* more fails the build with -E2BIG */
        uint64_t max_file_size;     /* more fails the build with -EFBIG */
        const AuthkeysLocal *local; /* whose lines are skipped (local-account); NULL: none */
} AuthkeysMapLimits;

#define AUTHKEYS_MAP_LINE_MAX (256U * 1024U)
#define AUTHKEYS_MAP_KEYS_PER_USER_MAX 32U
#define AUTHKEYS_MAP_USERS_MAX 500000U
#define AUTHKEYS_MAP_FILE_SIZE_MAX (256U * 1024U * 1024U)
#define AUTHKEYS_MAP_NAME_MAX 256U

/* The default caps. */
extern const AuthkeysMapLimits authkeys_map_default_limits;

/* Why a file line is skipped; the names are metric labels. */
typedef enum AuthkeysLineError {
        AUTHKEYS_LINE_OK = 0,
        AUTHKEYS_LINE_NO_COLON,
        AUTHKEYS_LINE_BAD_NAME, /* empty, over AUTHKEYS_MAP_NAME_MAX, control or blank characters */
        AUTHKEYS_LINE_BAD_LIST, /* not a list of Python string literals */
        AUTHKEYS_LINE_TOO_LONG,
        AUTHKEYS_LINE_DUPLICATE,     /* the name was on an earlier line, which wins */
        AUTHKEYS_LINE_LOCAL_ACCOUNT, /* a name limits.local refuses: its keys are never served */
        _AUTHKEYS_LINE_MAX,
} AuthkeysLineError;

const char *authkeys_line_error_to_string(AuthkeysLineError e);

/* One thing dropped: a line (line_error set) or one key of a line (reject set). */
typedef struct AuthkeysDrop {
        size_t line_no;   /* 1-based */
        const char *user; /* NULL when the name could not be read */
        AuthkeysLineError line_error;
        AuthkeysReject reject;
        size_t key_index; /* 0-based position in the line's list */
} AuthkeysDrop;

typedef void (*AuthkeysDropFn)(const AuthkeysDrop *drop, void *userdata);

typedef struct AuthkeysMapStats {
        size_t users, keys, lines;
        size_t invalid_keys[_AUTHKEYS_REJECT_MAX];
        size_t bad_lines[_AUTHKEYS_LINE_MAX];
} AuthkeysMapStats;

typedef struct AuthkeysMap AuthkeysMap;

/**
 * authkeys_map_build_fd() / authkeys_map_build_file() / authkeys_map_build_mem() -
 * build a map from an open file, a path or bytes.
 * @limits: NULL for authkeys_map_default_limits.
 * @drop: called for each dropped line and key, before the call returns; may be NULL.
 * Return: 0; -EFBIG, -E2BIG over the caps; -ENOMEM; -errno from open()/read().
 */
int authkeys_map_build_fd(int fd, const AuthkeysMapLimits *limits, AuthkeysDropFn drop, void *userdata,
                          AuthkeysMap **ret);
int authkeys_map_build_file(const char *path, const AuthkeysMapLimits *limits, AuthkeysDropFn drop,
                            void *userdata, AuthkeysMap **ret);
int authkeys_map_build_mem(const void *data, size_t len, const AuthkeysMapLimits *limits,
                           AuthkeysDropFn drop, void *userdata, AuthkeysMap **ret);

AuthkeysMap *authkeys_map_free(AuthkeysMap *m);
static inline void authkeys_map_freep(AuthkeysMap **m) {
        if (*m)
                *m = authkeys_map_free(*m);
}

const AuthkeysMapStats *authkeys_map_stats(const AuthkeysMap *m);

/* A valid key line in a map: @len bytes, not NUL-terminated. */
typedef struct AuthkeysMapKey {
        const char *line;
        size_t len;
} AuthkeysMapKey;

/**
 * authkeys_map_lookup() - the keys of the user named exactly @user.
 * @ret_n: the number of keys; 0 for a user with none.
 * Return: an iterator handle (>= 0) or -ENOENT for no such user.
 */
int authkeys_map_lookup(const AuthkeysMap *m, const char *user, size_t *ret_n);

/** authkeys_map_key() - key @i (< n) of the user @handle from authkeys_map_lookup(). */
AuthkeysMapKey authkeys_map_key(const AuthkeysMap *m, int handle, size_t i);

/**
 * authkeys_map_key_matches() - whether key @k is the one @match names
 * (sshd's %f, or %t %k); NULL matches every key.
 */
bool authkeys_map_key_matches(AuthkeysMapKey k, const AuthkeysMatch *match);
