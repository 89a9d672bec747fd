# agent/: the daemon core; agent/util/ the helpers every part links;
# agent/modutil/ the helpers only modules link; agent/proto/ the Varlink
# codec the daemon and the clients share; the client library and sunkctl
# are in agent/client/local.mk.

# The only installed header: <sunkd/module.h> for modules built outside this
# tree.  In-tree modules may also use agent/util/ and agent/modutil/;
# nothing else.
sunkdincludedir = $(includedir)/sunkd
sunkdinclude_HEADERS = %reldir%/include/sunkd/module.h

# Its pkg-config file: the flags, module_dir and the header's ABI version.
# No library comes with it, so it is the same on every architecture.
pkgconfigdir = $(datadir)/pkgconfig
pkgconfig_DATA = %reldir%/sunkd-module.pc
EXTRA_DIST += %reldir%/sunkd-module.pc.in
CLEANFILES += %reldir%/sunkd-module.pc

%reldir%/sunkd-module.pc: $(top_srcdir)/%reldir%/sunkd-module.pc.in $(top_srcdir)/%reldir%/include/sunkd/module.h Makefile
	$(AM_V_GEN)$(MKDIR_P) $(@D) && \
	h=$(top_srcdir)/%reldir%/include/sunkd/module.h && \
	major=$$($(SED) -n 's/^#define SUNKD_MODULE_ABI_MAJOR \([0-9][0-9]*\)$$/\1/p' $$h) && \
	minor=$$($(SED) -n 's/^#define SUNKD_MODULE_ABI_MINOR \([0-9][0-9]*\)$$/\1/p' $$h) && \
	test -n "$$major" && test -n "$$minor" && \
	$(SUBST_PATHS) -e "s|@ABI_MAJOR[@]|$$major|g" -e "s|@ABI_MINOR[@]|$$minor|g" \
		< $(top_srcdir)/$@.in > $@.tmp && mv $@.tmp $@

# The in-tree helper library: loop-free, non-logging, no daemon state.  The
# daemon, the clients, the modules and their tests link it.
noinst_LTLIBRARIES += %reldir%/libsunkd-util.la
%canon_reldir%_libsunkd_util_la_SOURCES = \
	%reldir%/util/cleanup.h \
	%reldir%/util/macro.h \
	%reldir%/util/errloc.c \
	%reldir%/util/errloc.h \
	%reldir%/util/secret-file.c \
	%reldir%/util/secret-file.h \
	%reldir%/util/spell.c \
	%reldir%/util/spell.h \
	%reldir%/util/fileio.c \
	%reldir%/util/fileio.h \
	%reldir%/util/peer-cred.c \
	%reldir%/util/peer-cred.h \
	%reldir%/util/rand-util.c \
	%reldir%/util/rand-util.h \
	%reldir%/util/ratelimit.c \
	%reldir%/util/ratelimit.h \
	%reldir%/util/siphash.h \
	%reldir%/util/strbuf.c \
	%reldir%/util/strbuf.h \
	%reldir%/util/strv.c \
	%reldir%/util/strv.h \
	%reldir%/util/text-clean.c \
	%reldir%/util/text-escape.c \
	%reldir%/util/text-escape.h \
	%reldir%/util/text-clean.h \
	%reldir%/util/time-util.c \
	%reldir%/util/time-util.h \
	%reldir%/util/trusted-path.c \
	%reldir%/util/trusted-path.h \
	%reldir%/util/json-util.h \
	# End of libsunkd_util_la_SOURCES

# The helpers only modules use (the shapes of the files and maps nsscache
# and authkeys share: colon-separated files, Python-escaped strings, the
# accounts never published): the daemon does not link them.  Its users link
# libsunkd-util too (a convenience library in another one is copied whole).
noinst_LTLIBRARIES += %reldir%/libsunkd-modutil.la
%canon_reldir%_libsunkd_modutil_la_SOURCES = \
	%reldir%/modutil/colon-file.c \
	%reldir%/modutil/colon-file.h \
	%reldir%/modutil/py-escape.c \
	%reldir%/modutil/py-escape.h \
	%reldir%/modutil/reserved-accounts.c \
	%reldir%/modutil/reserved-accounts.h \
	# End of libsunkd_modutil_la_SOURCES

# The daemon's core, as a library so unit tests link exactly what runs.
noinst_LTLIBRARIES += %reldir%/libsunkd-core.la
%canon_reldir%_libsunkd_core_la_SOURCES = \
	%reldir%/abi-copy.h \
	%reldir%/activation.c \
	%reldir%/activation.h \
	%reldir%/agent-methods.c \
	%reldir%/conf-keys.c \
	%reldir%/conf-keys.h \
	%reldir%/conf-tree.c \
	%reldir%/conf-tree.h \
	%reldir%/conf.c \
	%reldir%/conf.h \
	%reldir%/facts.c \
	%reldir%/facts.h \
	%reldir%/host-api.c \
	%reldir%/ipc.c \
	%reldir%/ipc.h \
	%reldir%/ipc-admit.c \
	%reldir%/ipc-call.c \
	%reldir%/ipc-conn.c \
	%reldir%/ipc-internal.h \
	%reldir%/ipc-listen.c \
	%reldir%/job-child.c \
	%reldir%/job-child.h \
	%reldir%/log.c \
	%reldir%/log.h \
	%reldir%/manager.c \
	%reldir%/manager.h \
	%reldir%/manager-internal.h \
	%reldir%/manager-reload.c \
	%reldir%/metrics.c \
	%reldir%/metrics.h \
	%reldir%/module-loader.c \
	%reldir%/module-loader.h \
	%reldir%/notify.c \
	%reldir%/notify.h \
	%reldir%/sched.c \
	%reldir%/sched.h \
	%reldir%/spawn.c \
	%reldir%/spawn.h \
	%reldir%/spawn-reap.c \
	%reldir%/watch.c \
	%reldir%/watch.h \
	%reldir%/work.c \
	%reldir%/work.h \
	# End of libsunkd_core_la_SOURCES
%canon_reldir%_libsunkd_core_la_CFLAGS = $(AM_CFLAGS) $(SYSTEMD_CFLAGS) $(JSONC_CFLAGS) $(YAML_CFLAGS)
%canon_reldir%_libsunkd_core_la_LIBADD = %reldir%/libsunkd-varlink.la %reldir%/libsunkd-util.la $(SYSTEMD_LIBS) $(JSONC_LIBS) \
	$(YAML_LIBS) $(PTHREAD_LIBS) $(LIBS) -lm

# The Varlink codec (agent/proto/): the daemon and the client library parse
# with the same code, built once.
noinst_LTLIBRARIES += %reldir%/libsunkd-varlink.la
%canon_reldir%_libsunkd_varlink_la_SOURCES = \
	%reldir%/proto/varlink.c \
	%reldir%/proto/varlink.h \
	# End of libsunkd_varlink_la_SOURCES
%canon_reldir%_libsunkd_varlink_la_CFLAGS = $(AM_CFLAGS) $(JSONC_CFLAGS)
%canon_reldir%_libsunkd_varlink_la_LIBADD = $(JSONC_LIBS)

sbin_PROGRAMS += %reldir%/sunkd
%canon_reldir%_sunkd_SOURCES = %reldir%/main.c
%canon_reldir%_sunkd_CFLAGS = $(AM_CFLAGS) $(SYSTEMD_CFLAGS) $(JSONC_CFLAGS)
%canon_reldir%_sunkd_LDADD = %reldir%/libsunkd-core.la

# End of agent/local.mk
