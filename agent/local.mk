# agent/: the daemon core, its utilities and the command-line clients.

# Installed as <sunkd/module.h> for modules built outside this tree.
sunkdincludedir = $(includedir)/sunkd
sunkdinclude_HEADERS = %reldir%/include/sunkd/module.h

# Utilities that clients and modules' tests link too; non-logging.
noinst_LTLIBRARIES += %reldir%/libsunkd-util.la
%canon_reldir%_libsunkd_util_la_SOURCES = \
	%reldir%/util/cleanup.h \
	%reldir%/util/colon-file.c \
	%reldir%/util/colon-file.h \
	%reldir%/util/macro.h \
	%reldir%/util/errloc.c \
	%reldir%/util/errloc.h \
	%reldir%/util/secret-file.c \
	%reldir%/util/secret-file.h \
	%reldir%/util/fileio.c \
	%reldir%/util/fileio.h \
	%reldir%/util/rand-util.c \
	%reldir%/util/rand-util.h \
	%reldir%/util/reserved-accounts.c \
	%reldir%/util/reserved-accounts.h \
	%reldir%/util/siphash.h \
	%reldir%/util/strbuf.c \
	%reldir%/util/strbuf.h \
	%reldir%/util/strv.c \
	%reldir%/util/strv.h \
	%reldir%/util/time-util.c \
	%reldir%/util/time-util.h \
	%reldir%/util/trusted-path.c \
	%reldir%/util/trusted-path.h \
	%reldir%/util/json-util.h \
	# End of libsunkd_util_la_SOURCES

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
	%reldir%/job-child.c \
	%reldir%/job-child.h \
	%reldir%/log.c \
	%reldir%/log.h \
	%reldir%/manager.c \
	%reldir%/manager.h \
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
	%reldir%/varlink.c \
	%reldir%/varlink.h \
	%reldir%/watch.c \
	%reldir%/watch.h \
	%reldir%/work.c \
	%reldir%/work.h \
	# End of libsunkd_core_la_SOURCES
%canon_reldir%_libsunkd_core_la_CFLAGS = $(AM_CFLAGS) $(SYSTEMD_CFLAGS) $(JSONC_CFLAGS) $(YAML_CFLAGS)
%canon_reldir%_libsunkd_core_la_LIBADD = %reldir%/libsunkd-util.la $(SYSTEMD_LIBS) $(JSONC_LIBS) \
	$(YAML_LIBS) $(PTHREAD_LIBS) $(LIBS) -lm

# The socket client: json-c and libsunkd-util only, no libsystemd, so the
# helpers sshd and slurmd run stay small.
noinst_LTLIBRARIES += %reldir%/libsunkd-client.la
%canon_reldir%_libsunkd_client_la_SOURCES = \
	%reldir%/client.c \
	%reldir%/client.h \
	%reldir%/varlink.c \
	%reldir%/varlink.h \
	# End of libsunkd_client_la_SOURCES
%canon_reldir%_libsunkd_client_la_CFLAGS = $(AM_CFLAGS) $(JSONC_CFLAGS)
%canon_reldir%_libsunkd_client_la_LIBADD = %reldir%/libsunkd-util.la $(JSONC_LIBS)

sbin_PROGRAMS += %reldir%/sunkd
%canon_reldir%_sunkd_SOURCES = %reldir%/main.c
%canon_reldir%_sunkd_CFLAGS = $(AM_CFLAGS) $(SYSTEMD_CFLAGS) $(JSONC_CFLAGS)
%canon_reldir%_sunkd_LDADD = %reldir%/libsunkd-core.la

bin_PROGRAMS += %reldir%/sunkctl
%canon_reldir%_sunkctl_SOURCES = %reldir%/sunkctl.c
%canon_reldir%_sunkctl_CFLAGS = $(AM_CFLAGS) $(JSONC_CFLAGS)
%canon_reldir%_sunkctl_LDADD = %reldir%/libsunkd-client.la

# End of agent/local.mk
