#!/bin/bash
# make install DESTDIR=...: what lands where, and a module built outside the
# tree against the installed <sunkd/module.h> is loaded by the installed daemon.
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
. "$SUNKD_SRCDIR/tests/lib/sunkd.sh"
sunkd_setup

D="$T/root"
make -s -C "$SUNKD_BUILDDIR" install DESTDIR="$D" > "$T/install.log" 2>&1 \
        || { sed 's/^/# /' "$T/install.log"; bail_out "make install failed"; }

# The configured directories, expanded as make would.
mkvar() {
        local v
        v=$(sed -n "s/^$1 = //p" "$SUNKD_BUILDDIR/Makefile")
        while [[ $v == *'${'* ]]; do
                v=$(prefix=$prefix exec_prefix=$exec_prefix datarootdir=$datarootdir eval echo "$v")
        done
        echo "$v"
}
prefix=$(mkvar prefix); exec_prefix=$(mkvar exec_prefix); datarootdir=$(mkvar datarootdir)
libdir=$(mkvar libdir); libexecdir=$(mkvar libexecdir); sysconfdir=$(mkvar sysconfdir); mandir=$(mkvar mandir); datadir=$(mkvar datadir)
unitdir=$(mkvar systemdsystemunitdir)
[ -n "$prefix" ] && [ -n "$unitdir" ] || bail_out "cannot read the configured directories"
for f in "$prefix/sbin/sunkd" "$prefix/bin/sunkctl" "$prefix/include/sunkd/module.h" \
         "$libdir/sunkd/nsscache.so" "$libdir/sunkd/authkeys.so" "$libdir/sunkd/gres.so" "$sysconfdir/sunkd/sunkd.yaml.example" \
         "$libexecdir/sunkd/sunkd-authkeys" "$mandir/man8/sunkd-authkeys.8" \
         "$mandir/man8/sunkd.8" "$mandir/man1/sunkctl.1" "$mandir/man5/sunkd.yaml.5" \
         "$unitdir/sunkd.service" "$unitdir/sunkd.socket" "$unitdir/sunkd.service.d/prolog.conf" \
         "$(mkvar tmpfilesdir)/sunkd.conf" "$datadir/sunkd/s6/sunkd/run" "$datadir/sunkd/s6/sunkd/type" \
         "$datarootdir/doc/sunkd/examples/nsscache.conf.example"; do
        ok "installed $f" test -f "$D$f"
done
ok "sunkd is executable" test -x "$D$prefix/sbin/sunkd"
ok "sunkctl is executable" test -x "$D$prefix/bin/sunkctl"
is "$(stat -c %a "$D$libexecdir/sunkd/sunkd-authkeys")" 755 "sunkd-authkeys is mode 0755, as sshd wants it"
is "$(stat -c %a "$D$libexecdir/sunkd")" 755 "in a directory only its owner writes"
ok "the s6 run script is executable" test -x "$D$datadir/sunkd/s6/sunkd/run"
ok "an operator's sunkd.yaml is never installed over" test ! -e "$D$sysconfdir/sunkd/sunkd.yaml"
like "$(grep ExecStart= "$D$unitdir/sunkd.service")" "ExecStart=$prefix/sbin/sunkd " "the unit starts the installed daemon"
is "$(find "$D" -name '*.la' -o -name '*.a' | wc -l)" 0 "no libtool archives or static libraries installed"
is "$(cd "$D$prefix/include" && find . ! -type d | sort)" "./sunkd/module.h" "module.h is the only header installed"

# A third-party module: only the installed header, no agent sources.
mkdir -p "$T/extmod"
cat > "$T/extmod/hello.c" <<'C'
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sunkd/module.h>

/* Its one way to write a file is the host's: it has no agent/util. */
typedef struct Hello {
        const sunkd_host_api *api;
        char *out;
} Hello;

static int hello_work(void *state, void *input, const sunkd_cancel *cancel, void **ret_result) {
        Hello *h = state;
        (void) input; (void) cancel; (void) ret_result;
        return h->out ? h->api->file_write_atomic(h->out, "hello\n", 6, 0644, (uid_t) -1, (gid_t) -1) : 0;
}

static int hello_init(sunkd_ctx *c, const sunkd_cfg *cfg, void **ret_state) {
        static const sunkd_job_spec spec = {
                .size = sizeof(sunkd_job_spec), .name = "hello.tick",
                .interval_usec = 3600 * UINT64_C(1000000), .work = hello_work,
        };
        const char *out = c->api->cfg_scalar(c->api->cfg_get(cfg, "out"));
        Hello *h = calloc(1, sizeof(*h));

        if (!h)
                return -ENOMEM;
        h->api = c->api;
        h->out = out ? strdup(out) : NULL;
        *ret_state = h;
        return c->api->job_add(c, &spec, NULL);
}

static void hello_fini(void *state) {
        Hello *h = state;
        if (h)
                free(h->out);
        free(h);
}

SUNKD_MODULE_DEFINE(.name = "hello", .version = "1.0", .init = hello_init, .fini = hello_fini);
C
# Its flags from the installed sunkd-module.pc, as a module's build would
# take them (the sysroot prefixes the -I with DESTDIR).
PC=(env PKG_CONFIG_PATH="$D$datadir/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$D" pkg-config)
ok "sunkd-module.pc is installed" test -f "$D$datadir/pkgconfig/sunkd-module.pc"
is "$("${PC[@]}" --variable=moduledir sunkd-module)" "$D$libdir/sunkd" "its moduledir is where sunkd loads modules from"
header_abi() { sed -n "s/^#define SUNKD_MODULE_ABI_$1 \([0-9]*\)$/\1/p" "$D$prefix/include/sunkd/module.h"; }
is "$("${PC[@]}" --variable=abi_major sunkd-module).$("${PC[@]}" --variable=abi_minor sunkd-module)" \
        "$(header_abi MAJOR).$(header_abi MINOR)" "its ABI version is the header's"
gcc -std=gnu11 -Wall -Wextra -Werror $("${PC[@]}" --cflags sunkd-module) $("${PC[@]}" --variable=module_cflags sunkd-module) \
        -o "$T/extmod/hello.so" "$T/extmod/hello.c" $("${PC[@]}" --libs sunkd-module) > "$T/cc.log" 2>&1
rc=$?
sed 's/^/# /' "$T/cc.log"
is "$rc" 0 "a module builds against the installed header alone, with pkg-config's flags"
like "$(readelf -d "$T/extmod/hello.so")" "BIND_NOW" "linked with -z now, as sunkd's own modules"

cp "$D$libdir/sunkd/nsscache.so" "$T/extmod/"
sunkd_config "modules:
  hello:
    out: $T/hello.out"
sed -i "s|^module_dir: .*|module_dir: $T/extmod|" "$T/sunkd.yaml"
SUNKD="$D$prefix/sbin/sunkd"
SUNKCTL="$D$prefix/bin/sunkctl"
sunkd_start
wait_runs hello.tick 1 || diag "hello.tick did not run"
like "$(ctl jobs)" "^hello\.tick +hello .* success" "the installed daemon runs the external module's job"
is "$(cat "$T/hello.out" 2>&1)" "hello" "which writes its file through the host's file_write_atomic"
like "$(ctl status)" "^hello +running +1\.0" "and shows the module"
sunkd_stop
is "$SUNKD_EXIT" 0 "clean exit"

# make uninstall takes back every file make install put there (make
# distcheck checks the same), the modules' .so among them.
make -s -C "$SUNKD_BUILDDIR" uninstall DESTDIR="$D" > "$T/uninstall.log" 2>&1 \
        || { sed 's/^/# /' "$T/uninstall.log"; bail_out "make uninstall failed"; }
is "$(cd "$D" && find . -type f | sort | paste -s -d ' ')" "" "make uninstall leaves no file behind"
done_testing
