/* sunkctl: an answer written to a file (a view's SUNKCTL_FLAG_OUTPUT flag,
 * `sunkctl health genconf -o FILE`): to a temporary file beside it first,
 * synced, then renamed to it, so a reader sees the old file or the whole
 * new one and never a part; without --force a file already there stays
 * (renameat2's RENAME_NOREPLACE, or link() where a file system lacks it,
 * so one made meanwhile is not replaced either). */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sunkctl.h"
#include "util/cleanup.h"
#include "util/macro.h"

static int fail(SunkctlOutput *o, const char *what, int error) {
        fprintf(stderr, "sunkctl: cannot write '%s': %s%s%s\n", o->path, what ?: "", what ? ": " : "",
                strerror(error));
        output_discard(o);
        return EXIT_FAILED;
}

int output_open(SunkctlOutput *o, const char *path, bool force) {
        _cleanup_free_ char *d = NULL, *b = NULL;
        struct stat st;
        int fd;

        *o = (SunkctlOutput){ .path = path, .force = force };
        if (isempty(path)) {
                fprintf(stderr, "sunkctl: --output: a file name, not an empty one\n");
                return EXIT_USAGE;
        }
        if ((stat(path, &st) >= 0 && S_ISDIR(st.st_mode)) || path[strlen(path) - 1] == '/') {
                fprintf(stderr, "sunkctl: cannot write '%s': it names a directory\n", path);
                return EXIT_FAILED;
        }
        if (!force && lstat(path, &st) >= 0) {
                fprintf(stderr, "sunkctl: '%s' exists: --force replaces it\n", path);
                return EXIT_FAILED;
        }
        d = strdup(path);
        b = strdup(path);
        if (!d || !b || asprintf(&o->tmp, "%s/.%s.XXXXXX", dirname(d), basename(b)) < 0) {
                o->tmp = NULL;
                return fail(o, NULL, ENOMEM);
        }
        fd = mkostemp(o->tmp, O_CLOEXEC);
        if (fd < 0) {
                int e = errno;

                free(o->tmp);
                o->tmp = NULL;
                return fail(o, NULL, e);
        }
        /* what a configuration file is: root's to change, everyone's to read */
        if (fchmod(fd, 0644) < 0 || !(o->f = fdopen(fd, "w"))) {
                int e = errno;

                close(fd);
                return fail(o, NULL, e);
        }
        return 0;
}

void output_discard(SunkctlOutput *o) {
        if (o->f)
                fclose(o->f);
        o->f = NULL;
        if (o->tmp)
                (void) unlink(o->tmp);
        free(o->tmp);
        o->tmp = NULL;
}

/* The directory's entry made durable: the rename survives a crash. */
static void sync_dir(const char *path) {
        _cleanup_free_ char *d = strdup(path);
        int fd;

        if (!d)
                return;
        fd = open(dirname(d), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd >= 0) {
                (void) fsync(fd);
                close(fd);
        }
}

int output_commit(SunkctlOutput *o) {
        FILE *f = o->f;
        int r;

        o->f = NULL;
        r = fflush(f) == 0 && !ferror(f) && fsync(fileno(f)) == 0 ? 0 : errno ?: EIO;
        if (fclose(f) != 0 && r == 0)
                r = errno;
        if (r != 0)
                return fail(o, NULL, r);
        if (o->force)
                r = rename(o->tmp, o->path) < 0 ? errno : 0;
        else {
                r = renameat2(AT_FDCWD, o->tmp, AT_FDCWD, o->path, RENAME_NOREPLACE) < 0 ? errno : 0;
                if (r == EINVAL || r == ENOSYS) /* a file system without it: link() never replaces */
                        r = link(o->tmp, o->path) < 0 ? errno : 0;
        }
        if (r == EEXIST) {
                fprintf(stderr, "sunkctl: '%s' exists: --force replaces it\n", o->path);
                output_discard(o);
                return EXIT_FAILED;
        }
        if (r != 0)
                return fail(o, NULL, r);
        output_discard(o); /* the temporary name, if link() made a second one */
        sync_dir(o->path);
        return 0;
}
