/* Replays a fuzz corpus through LLVMFuzzerTestOneInput under make check.
 * Arguments are files or directories; without arguments the scim-json
 * corpus in $SUNKD_SRCDIR is used. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util/cleanup.h"
#include "util/fileio.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path) {
        _cleanup_free_ char *buf = NULL;
        size_t len = 0;
        int r;

        r = fileio_read(path, 64 * 1024 * 1024, &buf, &len);
        if (r < 0) {
                fprintf(stderr, "%s: %s\n", path, strerror(-r));
                return r;
        }
        LLVMFuzzerTestOneInput((const uint8_t *) buf, len);
        printf("ok %s\n", path);
        return 0;
}

static int replay(const char *path, unsigned *n) {
        struct stat st;
        DIR *d;
        int r = 0;

        if (stat(path, &st) < 0) {
                perror(path);
                return -1;
        }
        if (!S_ISDIR(st.st_mode)) {
                (*n)++;
                return replay_file(path);
        }
        d = opendir(path);
        if (!d)
                return -1;
        for (struct dirent *de; (de = readdir(d));) {
                _cleanup_free_ char *p = NULL;

                if (de->d_name[0] == '.')
                        continue;
                if (asprintf(&p, "%s/%s", path, de->d_name) < 0 || replay(p, n) < 0)
                        r = -1;
        }
        closedir(d);
        return r;
}

int main(int argc, char *argv[]) {
        _cleanup_free_ char *def = NULL;
        unsigned n = 0;
        int r = 0;

        if (argc < 2) {
                const char *src = getenv("SUNKD_SRCDIR");
                if (asprintf(&def, "%s/tests/fuzz/corpus/scim-json", src ?: ".") < 0)
                        return 1;
                r = replay(def, &n);
        }
        for (int i = 1; i < argc; i++)
                if (replay(argv[i], &n) < 0)
                        r = -1;
        if (r < 0 || n == 0) {
                fprintf(stderr, "replay failed or empty corpus\n");
                return 1;
        }
        return 0;
}
