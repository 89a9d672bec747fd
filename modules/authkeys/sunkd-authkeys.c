/* sunkd-authkeys: sshd's AuthorizedKeysCommand.
 *
 *   AuthorizedKeysCommand /usr/libexec/sunkd/sunkd-authkeys --uid %U -- %u %f
 *
 * Asks sunkd (io.sunkd.AuthorizedKeys.Get) for USER's keys, or for the one
 * key sshd offered, and prints them one a line.  sshd runs this once or
 * twice per login, discards its stderr and throws every key away when it
 * exits non-zero, so: one hard deadline and no retries; problems go to
 * syslog; and when sunkd cannot answer, the sshkey cache is read here, with
 * the same validation and key matching, so a dead daemon locks nobody out
 * (unless --no-fallback).  A user name sshd passes is whatever the peer
 * typed: an invalid one prints nothing and touches nothing.
 *
 * The node's own accounts get no keys from either path, the rule the module
 * and the nsscache module follow: a name in the local passwd file or on the
 * reserved list, or one that logs in as a local or reserved uid, say a
 * directory's "toor" with uid 0.  That uid is sshd's %U when given, else
 * looked up as sshd did (getpwnam, which costs an NSS lookup per call).
 * Asked before sunkd, so a sunkd with another local_passwd changes nothing.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "authkeys-key.h"
#include "authkeys-local.h"
#include "authkeys-map.h"
#include "client/client.h"
#include "util/cleanup.h"
#include "util/macro.h"

#define SOCKET_DEFAULT SUNKD_RUNSTATEDIR "/sunkd/io.sunkd"
#define CACHE_DEFAULT SUNKD_SYSCONFDIR "/sshkey.cache"
#define LOCAL_PASSWD_DEFAULT "/etc/passwd"
#define TIMEOUT_DEFAULT_USEC (2 * 1000000ULL)
#define REPLY_MAX (4 * 1024 * 1024)

enum { EXIT_OK = 0, EXIT_ERROR = 1, EXIT_USAGE = 2 };

typedef struct Args {
        const char *socket;
        const char *cache;
        const char *local_passwd;
        int64_t uid; /* sshd's %U; -1: look it up */
        uint64_t timeout_usec;
        bool fallback;
        const char *user;
        const char *fingerprint, *type, *key;
} Args;

static uint64_t now_usec(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000ULL + (uint64_t) ts.tv_nsec / 1000;
}

static void help(void) {
        printf("Usage: sunkd-authkeys [OPTIONS] USER [FINGERPRINT | TYPE KEY]\n\n"
               "Print USER's SSH keys for sshd's AuthorizedKeysCommand, from sunkd's authkeys\n"
               "module, or from the sshkey cache when sunkd cannot answer. With sshd's %%f\n"
               "(FINGERPRINT) or %%t %%k (TYPE KEY) only that key is printed.\n\n"
               "  -s, --socket PATH    sunkd's socket (default %s)\n"
               "  -c, --cache FILE     the sshkey cache read when sunkd cannot answer\n"
               "                       (default %s)\n"
               "  -t, --timeout SEC    one deadline for connecting and the answer (default 2)\n"
               "      --no-fallback    never read the cache: print nothing, exit 1\n"
               "  -U, --uid UID        the uid USER logs in as (sshd's %%U); without it,\n"
               "                       it is looked up\n"
               "      --local-passwd FILE\n"
               "                       the node's own accounts, which get no keys\n"
               "                       (default %s)\n"
               "  -h, --help           show this help\n"
               "      --version        show the version\n\n"
               "No keys are printed for the node's own accounts: a name in FILE, a\n"
               "reserved system name, or a local or reserved UID.\n\n"
               "Exit status: 0 (keys printed, or none: an unknown, invalid or local user),\n"
               "1 when no answer could be had, 2 usage. Problems are logged to syslog.\n",
               SOCKET_DEFAULT, CACHE_DEFAULT, LOCAL_PASSWD_DEFAULT);
}

static int parse_timeout(const char *s, uint64_t *ret) {
        char *end;
        double d;

        errno = 0;
        d = strtod(s, &end);
        if (errno != 0 || end == s || *end != '\0' || !(d > 0) || d > 3600)
                return -EINVAL;
        *ret = (uint64_t) (d * 1e6);
        return 0;
}

/* Digits only, as sshd's %U expands. */
static int parse_uid(const char *s, int64_t *ret) {
        int64_t v = 0;

        if (!*s)
                return -EINVAL;
        for (; *s; s++) {
                if (*s < '0' || *s > '9')
                        return -EINVAL;
                v = v * 10 + (*s - '0');
                if (v > UINT32_MAX)
                        return -ERANGE;
        }
        *ret = v;
        return 0;
}

/* Returns -1 to go on, else the exit status. */
static int parse_args(int argc, char **argv, Args *a) {
        enum { ARG_VERSION = 0x100, ARG_NO_FALLBACK, ARG_LOCAL_PASSWD };
        static const struct option options[] = { { "socket", required_argument, NULL, 's' },
                                                 { "cache", required_argument, NULL, 'c' },
                                                 { "timeout", required_argument, NULL, 't' },
                                                 { "no-fallback", no_argument, NULL, ARG_NO_FALLBACK },
                                                 { "help", no_argument, NULL, 'h' },
                                                 { "version", no_argument, NULL, ARG_VERSION },
                                                 { "local-passwd", required_argument, NULL,
                                                   ARG_LOCAL_PASSWD },
                                                 { "uid", required_argument, NULL, 'U' },
                                                 {} };
        int opt, rest;

        opterr = 0;

        *a = (Args){ .socket = getenv("SUNKD_SOCKET") ?: SOCKET_DEFAULT,
                     .cache = CACHE_DEFAULT,
                     .local_passwd = LOCAL_PASSWD_DEFAULT,
                     .uid = -1,
                     .timeout_usec = TIMEOUT_DEFAULT_USEC,
                     .fallback = true };
        while ((opt = getopt_long(argc, argv, "+s:c:t:U:h", options, NULL)) >= 0)
                switch (opt) {
                case 's':
                        a->socket = optarg;
                        break;
                case 'c':
                        a->cache = optarg;
                        break;
                case 't':
                        if (parse_timeout(optarg, &a->timeout_usec) < 0) {
                                fprintf(stderr, "sunkd-authkeys: invalid timeout '%s'\n", optarg);
                                return EXIT_USAGE;
                        }
                        break;
                case ARG_NO_FALLBACK:
                        a->fallback = false;
                        break;
                case ARG_LOCAL_PASSWD:
                        a->local_passwd = optarg;
                        break;
                case 'U':
                        if (parse_uid(optarg, &a->uid) < 0) {
                                fprintf(stderr, "sunkd-authkeys: invalid uid '%s'\n", optarg);
                                return EXIT_USAGE;
                        }
                        break;
                case 'h':
                        help();
                        return EXIT_OK;
                case ARG_VERSION:
                        printf("sunkd-authkeys %s\n", PACKAGE_VERSION);
                        return EXIT_OK;
                default:
                        /* sshd puts %u where the peer's user name goes: "-x" is
                         * a hostile name, not a typo to fail on.  Nothing for it. */
                        syslog(LOG_WARNING,
                               "ignoring a call with an unknown option or a user name starting with '-'");
                        return EXIT_OK;
                }
        rest = argc - optind;
        if (rest < 1 || rest > 3) {
                fprintf(stderr, "sunkd-authkeys: expected USER [FINGERPRINT | TYPE KEY]\n");
                return EXIT_USAGE;
        }
        a->user = argv[optind];
        if (rest == 2)
                a->fingerprint = argv[optind + 1];
        else if (rest == 3) {
                a->type = argv[optind + 1];
                a->key = argv[optind + 2];
        }
        return -1;
}

static int print_line(const char *line, size_t len) {
        if (fwrite(line, 1, len, stdout) != len || fputc('\n', stdout) == EOF)
                return -EIO;
        return 0;
}

/* ---- From sunkd ---------------------------------------------------------- */

static int ask_sunkd(const Args *a) {
        _cleanup_close_ int fd = -1;
        _cleanup_free_ char *error = NULL;
        json_object *params = NULL, *reply = NULL, *keys;
        uint64_t deadline = now_usec() + a->timeout_usec, now;
        int r;

        r = client_connect(a->socket, a->timeout_usec, &fd);
        if (r < 0) {
                syslog(LOG_WARNING, "cannot connect to %s: %s", a->socket, strerror(-r));
                return r;
        }
        now = now_usec();
        if (now >= deadline)
                return -ETIMEDOUT;
        params = json_object_new_object();
        if (!params || json_object_object_add(params, "user", json_object_new_string(a->user)) < 0 ||
            (a->fingerprint &&
             json_object_object_add(params, "fingerprint", json_object_new_string(a->fingerprint)) < 0) ||
            (a->type && json_object_object_add(params, "type", json_object_new_string(a->type)) < 0) ||
            (a->key && json_object_object_add(params, "key", json_object_new_string(a->key)) < 0) ||
            /* sunkd says once that an NSS lookup a login is the price (sshd_config without %U) */
            (a->uid < 0 &&
             json_object_object_add(params, "uid_looked_up", json_object_new_boolean(true)) < 0)) {
                json_object_put(params);
                return -ENOMEM;
        }
        r = client_call_last(fd, "io.sunkd.AuthorizedKeys.Get", params, deadline - now, REPLY_MAX, &reply,
                             &error);
        json_object_put(params);
        if (r == -EREMOTEIO && streq_ptr(error, "io.sunkd.PermissionDenied")) {
                /* sshd runs this as its AuthorizedKeysCommandUser: that uid is what sunkd refused */
                syslog(LOG_WARNING,
                       "sunkd refused uid %u for user %s: sshd's AuthorizedKeysCommandUser must be root or "
                       "in "
                       "the authkeys section's allow: list in sunkd.yaml",
                       (unsigned) getuid(), a->user);
                json_object_put(reply);
                return r;
        }
        if (r < 0) {
                syslog(LOG_WARNING, "sunkd did not answer for user %s: %s", a->user,
                       r == -EREMOTEIO && error ? error : strerror(-r));
                json_object_put(reply);
                return r;
        }
        r = 0;
        if (!json_object_object_get_ex(reply, "keys", &keys) || !json_object_is_type(keys, json_type_array))
                r = -EBADMSG;
        for (size_t i = 0; r >= 0 && i < json_object_array_length(keys); i++) {
                json_object *k = json_object_array_get_idx(keys, i);

                /* One key a line: a key with a newline would be two lines to sshd. */
                if (!json_object_is_type(k, json_type_string) ||
                    memchr(json_object_get_string(k), '\n', (size_t) json_object_get_string_len(k)))
                        r = -EBADMSG;
        }
        for (size_t i = 0; r >= 0 && i < json_object_array_length(keys); i++) {
                json_object *k = json_object_array_get_idx(keys, i);
                r = print_line(json_object_get_string(k), (size_t) json_object_get_string_len(k));
        }
        if (r == -EBADMSG)
                syslog(LOG_ERR, "malformed answer from sunkd for user %s", a->user);
        json_object_put(reply);
        return r;
}

/* ---- From the cache file ------------------------------------------------- */

/* The next line "USER:..." from *p on, or NULL; *p moves past it. */
static const char *next_line(const char **p, const char *end, const char *user, size_t *ret_len) {
        size_t ul = strlen(user);

        while (*p < end) {
                const char *l = *p, *nl = memchr(l, '\n', (size_t) (end - l)), *e = nl ?: end;

                *p = nl ? nl + 1 : end;
                if ((size_t) (e - l) > ul && memcmp(l, user, ul) == 0 && l[ul] == ':') {
                        *ret_len = (size_t) (e - l);
                        return l;
                }
        }
        return NULL;
}

/* The user's entry as sunkd's map holds it: from the first of the user's
 * lines that can be read (a broken one is skipped there, and a later line
 * is the user's), each through the map builder: the same validation as
 * sunkd's, at the cost of a scan of the file.  *ret is NULL for no entry. */
static int user_map(const char *data, size_t len, const char *user, const AuthkeysMapLimits *limits,
                    AuthkeysMap **ret) {
        const char *p = data, *end = data + len, *line;
        size_t line_len = 0, n;
        int r;

        *ret = NULL;
        while ((line = next_line(&p, end, user, &line_len))) {
                _cleanup_(authkeys_map_freep) AuthkeysMap *m = NULL;

                r = authkeys_map_build_mem(line, line_len, limits, NULL, NULL, &m);
                if (r < 0)
                        return r;
                if (authkeys_map_lookup(m, user, &n) >= 0) {
                        *ret = TAKE_PTR(m);
                        return 0;
                }
        }
        return 0;
}

static int read_cache(const Args *a, const AuthkeysLocal *local, const AuthkeysMatch *match) {
        AuthkeysMapLimits limits = authkeys_map_default_limits;
        _cleanup_close_ int fd = -1;
        _cleanup_(authkeys_map_freep) AuthkeysMap *m = NULL;
        size_t n = 0;
        struct stat st;
        void *data;
        int r, h;

        fd = open(a->cache, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0 || fstat(fd, &st) < 0) {
                r = -errno;
                syslog(LOG_ERR, "cannot read %s: %s", a->cache, strerror(-r));
                return r;
        }
        if (!S_ISREG(st.st_mode) || (uint64_t) st.st_size > AUTHKEYS_MAP_FILE_SIZE_MAX) {
                syslog(LOG_ERR, "%s: not a regular file of at most %u bytes", a->cache,
                       AUTHKEYS_MAP_FILE_SIZE_MAX);
                return -EINVAL;
        }
        if (st.st_size == 0)
                return 0;
        limits.local = local;
        data = mmap(NULL, (size_t) st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (data == MAP_FAILED) {
                r = -errno;
                syslog(LOG_ERR, "cannot map %s: %s", a->cache, strerror(-r));
                return r;
        }
        r = user_map(data, (size_t) st.st_size, a->user, &limits, &m);
        if (r >= 0 && m && (h = authkeys_map_lookup(m, a->user, &n)) >= 0)
                for (size_t i = 0; r >= 0 && i < n; i++) {
                        AuthkeysMapKey k = authkeys_map_key(m, h, i);

                        if (authkeys_map_key_matches(k, match))
                                r = print_line(k.line, k.len);
                }
        (void) munmap(data, (size_t) st.st_size);
        return r;
}

/* 1 when @a's user is one of the node's own accounts, 0 if not, -errno
 * when that cannot be known (the local passwd file cannot be read). */
static int local_account(const Args *a, AuthkeysLocal **ret_local) {
        _cleanup_(authkeys_local_freep) AuthkeysLocal *l = NULL;
        const struct passwd *pw;
        int r;

        r = authkeys_local_load(a->local_passwd, &l);
        if (r < 0) {
                syslog(LOG_ERR, "cannot read %s: %s", a->local_passwd, strerror(-r));
                return r;
        }
        r = authkeys_local_name(l, a->user, strlen(a->user));
        /* The entry sshd logs the user in as: a directory's "toor" with uid 0 is root. */
        if (!r && a->uid >= 0)
                r = authkeys_local_uid(l, (uint32_t) a->uid);
        else if (!r && (pw = getpwnam(a->user)))
                r = authkeys_local_uid(l, (uint32_t) pw->pw_uid) ||
                    authkeys_local_name(l, pw->pw_name, strlen(pw->pw_name));
        if (r)
                syslog(LOG_WARNING, "refusing the keys of %s: a local account", a->user);
        *ret_local = TAKE_PTR(l);
        return r;
}

int main(int argc, char **argv) {
        _cleanup_(authkeys_local_freep) AuthkeysLocal *local = NULL;
        AuthkeysMatch match, *mp = NULL;
        Args a;
        int r;

        /* sshd may close the pipe early: a failed write is reported, not a silent death. */
        signal(SIGPIPE, SIG_IGN);
        openlog("sunkd-authkeys", LOG_PID, LOG_AUTHPRIV);
        r = parse_args(argc, argv, &a);
        if (r >= 0)
                return r;
        if (!authkeys_user_name_valid(a.user, strlen(a.user)))
                return EXIT_OK;
        /* The form only: decoding needs libcrypto, which sunkd has loaded already. */
        if ((a.fingerprint &&
             (strncmp(a.fingerprint, "SHA256:", 7) != 0 ||
              strnlen(a.fingerprint, AUTHKEYS_FINGERPRINT_MAX) >= AUTHKEYS_FINGERPRINT_MAX)) ||
            (a.type && (!authkeys_type_known(a.type, strlen(a.type)) ||
                        strnlen(a.key, AUTHKEYS_LINE_MAX + 1) > AUTHKEYS_LINE_MAX))) {
                syslog(LOG_WARNING, "ignoring an invalid key or fingerprint for user %s", a.user);
                return EXIT_OK;
        }

        r = local_account(&a, &local);
        if (r != 0)
                return r < 0 ? EXIT_ERROR : EXIT_OK;

        r = ask_sunkd(&a);
        if (r == -EIO)
                return EXIT_ERROR;
        if (r < 0 && a.fallback) {
                syslog(LOG_NOTICE, "reading %s for user %s: sunkd did not answer", a.cache, a.user);
                if (a.fingerprint)
                        r = authkeys_match_from_fingerprint(a.fingerprint, &match);
                else if (a.type)
                        r = authkeys_match_from_key(a.type, a.key, &match);
                else
                        r = 0;
                if (r < 0) {
                        syslog(LOG_WARNING, "ignoring an invalid key or fingerprint for user %s", a.user);
                        return EXIT_OK;
                }
                mp = a.fingerprint || a.type ? &match : NULL;
                r = read_cache(&a, local, mp);
        }
        if (fflush(stdout) != 0 && r >= 0)
                r = -EIO;
        return r < 0 ? EXIT_ERROR : EXIT_OK;
}
