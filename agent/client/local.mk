# agent/client/: the client side of the control socket.

# The socket client: json-c and libsunkd-util only, no libsystemd, so the
# helpers sshd and slurmd run (modules/*/) stay small.
noinst_LTLIBRARIES += %reldir%/libsunkd-client.la
%canon_reldir%_libsunkd_client_la_SOURCES = \
	%reldir%/client.c \
	%reldir%/client.h \
	# End of libsunkd_client_la_SOURCES
%canon_reldir%_libsunkd_client_la_CFLAGS = $(AM_CFLAGS) $(JSONC_CFLAGS)
%canon_reldir%_libsunkd_client_la_LIBADD = agent/libsunkd-varlink.la agent/libsunkd-util.la $(JSONC_LIBS)

# sunkctl's verbs and renderers, as a library so its unit test links what
# runs.  A module's own renderer (modules/<name>/<name>-render.c) is linked
# in here where the generic one will not do.
noinst_LTLIBRARIES += %reldir%/libsunkctl.la
%canon_reldir%_libsunkctl_la_SOURCES = \
	%reldir%/sunkctl.h \
	%reldir%/sunkctl-call.c \
	%reldir%/sunkctl-daemon.c \
	%reldir%/sunkctl-jobs.c \
	%reldir%/sunkctl-module.c \
	%reldir%/sunkctl-params.c \
	%reldir%/sunkctl-params.h \
	%reldir%/sunkctl-render.c \
	%reldir%/sunkctl-render.h \
	%reldir%/sunkctl-run.c \
	%reldir%/sunkctl-status.c \
	modules/gres/gres-render.c \
	modules/gres/gres-render.h \
	modules/health/health-render.c \
	modules/health/health-render.h \
	modules/prolog/prolog-render.c \
	modules/prolog/prolog-render.h \
	# End of libsunkctl_la_SOURCES
%canon_reldir%_libsunkctl_la_CPPFLAGS = $(AM_CPPFLAGS) -iquote $(top_srcdir)/modules
%canon_reldir%_libsunkctl_la_CFLAGS = $(AM_CFLAGS) $(JSONC_CFLAGS)
%canon_reldir%_libsunkctl_la_LIBADD = %reldir%/libsunkd-client.la $(JSONC_LIBS) -lm

bin_PROGRAMS += %reldir%/sunkctl
%canon_reldir%_sunkctl_SOURCES = %reldir%/sunkctl.c
%canon_reldir%_sunkctl_CFLAGS = $(AM_CFLAGS) $(JSONC_CFLAGS)
%canon_reldir%_sunkctl_LDADD = %reldir%/libsunkctl.la

# End of agent/client/local.mk
