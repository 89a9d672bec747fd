/* The reserved account list.  Names are kept in strcmp() order so that a
 * lookup costs a binary search: nsscache asks once per directory user. */
#include <stdlib.h>
#include <string.h>

#include "util/macro.h"
#include "modutil/reserved-accounts.h"

const char *const reserved_account_names[] = {
        "adm",     "admin",   "audio",     "avahi",   "backup",     "bin",     "cdrom",      "chrony",
        "crontab", "daemon",  "dbus",      "dialout", "disk",       "dnsmasq", "docker",     "fax",
        "floppy",  "ftp",     "games",     "gnats",   "halt",       "input",   "irc",        "kmem",
        "kvm",     "list",    "lp",        "lxd",     "mail",       "man",     "messagebus", "munge",
        "netdev",  "news",    "nfsnobody", "nobody",  "nogroup",    "ntp",     "operator",   "plugdev",
        "polkitd", "postfix", "proxy",     "render",  "root",       "rpc",     "rpcuser",    "sasl",
        "sgx",     "shadow",  "shutdown",  "slurm",   "slurmrestd", "src",     "ssh",        "sshd",
        "staff",   "sudo",    "sync",      "sys",     "syslog",     "tape",    "tss",        "tty",
        "users",   "utmp",    "uucp",      "uuidd",   "video",      "voice",   "wheel",      "www-data",
};
const size_t reserved_account_names_count = ELEMENTSOF(reserved_account_names);

/* "systemd-*" and Debian's "_apt"-style package accounts */
static const char *const reserved_prefixes[] = { "systemd-", "_" };

static const uint32_t reserved_ids[] = { 0, 65534, 65535 };

typedef struct Key {
        const char *name;
        size_t len;
} Key;

/* strcmp() order of a (name, len) key against a NUL-terminated entry. */
static int compare(const void *k, const void *e) {
        const Key *key = k;
        const char *entry = *(const char *const *) e;
        size_t n = strlen(entry);
        int c = memcmp(key->name, entry, MIN(key->len, n));

        if (c != 0)
                return c;
        return key->len < n ? -1 : key->len > n;
}

bool reserved_account_name(const char *name, size_t len) {
        Key key = { name, len };

        for (size_t i = 0; i < ELEMENTSOF(reserved_prefixes); i++) {
                size_t n = strlen(reserved_prefixes[i]);

                if (len >= n && memcmp(name, reserved_prefixes[i], n) == 0)
                        return true;
        }
        return bsearch(&key, reserved_account_names, ELEMENTSOF(reserved_account_names), sizeof(char *),
                       compare);
}

bool reserved_account_id(uint32_t id) {
        for (size_t i = 0; i < ELEMENTSOF(reserved_ids); i++)
                if (id == reserved_ids[i])
                        return true;
        return false;
}
