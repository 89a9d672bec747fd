/* bench-runparts: the reference the prolog row is measured against, a
 * run-parts in C: the regular executable files of DIR in strcmp() order,
 * each forked, exec'd and waited for, one after another.  Exits 1 when one
 * failed.  No checks, no capture, no timeout: the least a runner does.
 *
 * Usage: bench-runparts DIR
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static int cmp(const void *a, const void *b) {
        return strcmp(*(char *const *) a, *(char *const *) b);
}

int main(int argc, char **argv) {
        char *names[256], path[4096];
        size_t n = 0;
        int failed = 0;
        struct dirent *de;
        DIR *d;

        if (argc != 2 || !(d = opendir(argv[1]))) {
                fprintf(stderr, "usage: bench-runparts DIR\n");
                return 2;
        }
        while ((de = readdir(d)) && n < 256)
                if (de->d_name[0] != '.')
                        names[n++] = strdup(de->d_name);
        closedir(d);
        qsort(names, n, sizeof(*names), cmp);
        for (size_t i = 0; i < n; i++) {
                struct stat st;
                pid_t pid;
                int status;

                snprintf(path, sizeof(path), "%s/%s", argv[1], names[i]);
                free(names[i]);
                if (stat(path, &st) < 0 || !S_ISREG(st.st_mode) || !(st.st_mode & 0111))
                        continue;
                pid = fork();
                if (pid == 0) {
                        char *const args[] = { path, NULL };

                        execv(path, args);
                        _exit(127);
                }
                if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
                    WEXITSTATUS(status) != 0)
                        failed = 1;
        }
        return failed;
}
