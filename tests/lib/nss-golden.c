/* The golden data set, built from static tables into heap-owned NssMaps.
 *
 * The entries exercise what the files format has to get right: source order
 * that is not sorted, uids whose decimal text sorts differently from their
 * value (9999 after 50001), UTF-8 in gecos and in a name, shadow fields that
 * are 0 (written empty, as Python's `x or ''` does), groups with none, one
 * and many members, and ssh keys that need every kind of Python repr quoting.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/cleanup.h"
#include "util/macro.h"
#include "util/strv.h"

#include "nss-golden.h"

typedef struct User {
        const char *name;
        uint32_t uid, gid;
        const char *gecos, *shell;
        int64_t lstchg, min, max, warn;
        const char *keys[4];
} User;

typedef struct Group {
        const char *name;
        uint32_t gid;
        const char *members[4];
} Group;

static const User users[] = {
        { "sunkt-carol",
          50003,
          50100,
          "Carol Example",
          "/bin/bash",
          -1,
          -1,
          -1,
          -1,
          { "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAICarol \"carol's\" \\key", NULL } },
        { "sunkt-alice",
          50001,
          50100,
          "Alice \xc3\x9cn\xc3\xaf"
          "c\xc3\xb6"
          "d\xc3\xa9",
          "/bin/zsh",
          19000,
          0,
          99999,
          7,
          { "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAlice alice@laptop",
            "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQAlice alice@desk", NULL } },
        { "sunkt-bob", 50002, 50101, "", "/bin/bash", 0, -1, -1, -1, { NULL } },
        { "sunkt-dave",
          9999,
          50100,
          "Dave O'Neil",
          "/bin/bash",
          18500,
          1,
          90,
          14,
          { "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIDave dave's key", NULL } },
        { "sunkt-zo\xc3\xab",
          50005,
          50103,
          "Zo\xc3\xab",
          "/bin/sh",
          -1,
          -1,
          -1,
          -1,
          { "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIZoe zo\xc3\xab@host\xc2\xa0tab\there",
            "from=\"10.0.0.0/8\" ssh-ed25519 AAAAC3Nz ctl\x01zw\xe2\x80\x8b"
            "end",
            NULL } },
};

static const User extra_users[] = {
        { "sunkt-erin", 50006, 50100, "Erin Extra", "/bin/bash", -1, -1, -1, -1, { NULL } },
        { "sunkt-frank",
          50007,
          50100,
          "Frank Extra",
          "/bin/bash",
          -1,
          -1,
          -1,
          -1,
          { "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFrank frank@x", NULL } },
};

/* Variant 2 repeats a name at the end: libnss-cache's index resolves it to
 * this later line, its linear scan to the first one, so a test can tell
 * whether lookups went through the index. */
static const User duplicate_user[] = {
        { "sunkt-dave", 9998, 50100, "Dave Again", "/bin/bash", -1, -1, -1, -1, { NULL } },
};

static const Group groups[] = {
        { "sunkt-users", 50100, { "sunkt-carol", "sunkt-alice", "sunkt-dave", NULL } },
        { "sunkt-solo", 50101, { "sunkt-bob", NULL } },
        { "sunkt-empty", 50102, { NULL } },
        { "sunkt-admins", 50103, { "sunkt-alice", "sunkt-zo\xc3\xab", NULL } },
};

static int add_user(NssMaps *m, const User *u, unsigned variant) {
        size_t i = m->n_passwd;
        char *gecos = NULL, *dir = NULL;

        if (variant != 1)
                gecos = strdup(u->gecos);
        else if (asprintf(&gecos, "%s (second variant, longer)", u->gecos) < 0)
                gecos = NULL;
        if (asprintf(&dir, "/mnt/home/%s", u->name) < 0)
                dir = NULL;

        m->passwd[i] = (NssPasswd){
                .name = strdup(u->name),
                .passwd = strdup("x"),
                .uid = u->uid,
                .gid = u->gid,
                .gecos = gecos,
                .dir = dir,
                .shell = strdup(u->shell),
        };
        m->n_passwd++;
        m->shadow[i] = (NssShadow){
                .name = strdup(u->name),
                .passwd = strdup("*"),
                .lstchg = u->lstchg,
                .min = u->min,
                .max = u->max,
                .warn = u->warn,
                .inact = -1,
                .expire = -1,
                .flag = -1,
        };
        m->n_shadow++;
        m->sshkey[i] = (NssSshkey){ .name = strdup(u->name), .keys = strv_copy((char *const *) u->keys) };
        m->n_sshkey++;

        if (!m->passwd[i].name || !m->passwd[i].passwd || !gecos || !dir || !m->passwd[i].shell ||
            !m->shadow[i].name || !m->shadow[i].passwd || !m->sshkey[i].name || !m->sshkey[i].keys)
                return -ENOMEM;
        return 0;
}

int nss_golden_build(unsigned variant, NssMaps *ret) {
        size_t n_users = ELEMENTSOF(users) + (variant == 1 ? ELEMENTSOF(extra_users) : 0) +
                         (variant == 2 ? ELEMENTSOF(duplicate_user) : 0);
        NssMaps m = {};
        int r = 0;

        m.passwd = calloc(n_users, sizeof(NssPasswd));
        m.shadow = calloc(n_users, sizeof(NssShadow));
        m.sshkey = calloc(n_users, sizeof(NssSshkey));
        m.group = calloc(ELEMENTSOF(groups), sizeof(NssGroup));
        if (!m.passwd || !m.shadow || !m.sshkey || !m.group)
                r = -ENOMEM;

        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(users); i++)
                r = add_user(&m, users + i, variant);
        for (size_t i = 0; r >= 0 && variant == 1 && i < ELEMENTSOF(extra_users); i++)
                r = add_user(&m, extra_users + i, variant);
        for (size_t i = 0; r >= 0 && variant == 2 && i < ELEMENTSOF(duplicate_user); i++)
                r = add_user(&m, duplicate_user + i, 0);

        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(groups); i++) {
                m.group[i] = (NssGroup){
                        .name = strdup(groups[i].name),
                        .passwd = strdup("x"),
                        .gid = groups[i].gid,
                        .members = strv_copy((char *const *) groups[i].members),
                };
                m.n_group++;
                if (!m.group[i].name || !m.group[i].passwd || !m.group[i].members)
                        r = -ENOMEM;
        }

        if (r < 0) {
                nss_maps_done(&m);
                *ret = (NssMaps){};
                return r;
        }
        *ret = m;
        return 0;
}
