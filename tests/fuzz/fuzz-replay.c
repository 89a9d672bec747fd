/* Runs every file of a corpus directory through LLVMFuzzerTestOneInput(),
 * so the seed corpus (and every crash once found) is a regression test in
 * `make check`, under the sanitizers too.  Prints TAP: one line per file.
 * Linked into each fuzz target; `make fuzz` builds the targets with
 * libFuzzer's own main instead (SUNKD_LIBFUZZER), for finding new inputs.
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/fileio.h"

#ifndef SUNKD_LIBFUZZER

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int name_compare(const void *a, const void *b) {
        return strcmp(*(char *const *) a, *(char *const *) b);
}

int main(int argc, char **argv) {
        char **names = NULL;
        size_t n = 0;
        struct dirent *de;
        DIR *d;

        if (argc != 2) {
                fprintf(stderr, "usage: %s CORPUS-DIR\n", argv[0]);
                return 2;
        }
        d = opendir(argv[1]);
        if (!d) {
                printf("Bail out! cannot open '%s': %s\n", argv[1], strerror(errno));
                return 1;
        }
        while ((de = readdir(d))) {
                char **p;

                if (de->d_name[0] == '.')
                        continue;
                p = realloc(names, (n + 1) * sizeof(char *));
                if (!p || !(p[n] = strdup(de->d_name))) {
                        printf("Bail out! out of memory\n");
                        return 1;
                }
                names = p;
                n++;
        }
        closedir(d);
        if (n == 0) {
                printf("Bail out! '%s' is empty\n", argv[1]);
                return 1;
        }
        qsort(names, n, sizeof(char *), name_compare);

        printf("1..%zu\n", n);
        for (size_t i = 0; i < n; i++) {
                char *path = NULL, *data = NULL;
                size_t len = 0;
                int r;

                if (asprintf(&path, "%s/%s", argv[1], names[i]) < 0) {
                        printf("Bail out! out of memory\n");
                        return 1;
                }
                r = fileio_read(path, 16 * 1024 * 1024, &data, &len);
                if (r < 0) {
                        printf("not ok %zu - %s: %s\n", i + 1, names[i], strerror(-r));
                        return 1;
                }
                /* An exact-size copy, so the sanitizers see any read past the end. */
                uint8_t *exact = malloc(len > 0 ? len : 1);

                if (!exact) {
                        printf("Bail out! out of memory\n");
                        return 1;
                }
                memcpy(exact, data, len);
                LLVMFuzzerTestOneInput(exact, len);
                free(exact);
                printf("ok %zu - %s\n", i + 1, names[i]);
                fflush(stdout);
                free(data);
                free(path);
                free(names[i]);
        }
        free(names);
        return 0;
}
#endif
