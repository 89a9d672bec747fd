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
# runs.  The modules' views (modules/<name>/<name>-render.c, listed in
# SUNKCTL_VIEWS and SUNKCTL_VIEW_SOURCES by their local.mk) are linked in
# here, and sunkctl-views.c, generated from the list, is their table: no
# file of sunkctl names a module.
noinst_LTLIBRARIES += %reldir%/libsunkctl.la
%canon_reldir%_libsunkctl_la_SOURCES = \
	%reldir%/sunkctl.h \
	%reldir%/sunkctl-call.c \
	%reldir%/sunkctl-daemon.c \
	%reldir%/sunkctl-jobs.c \
	%reldir%/sunkctl-module.c \
	%reldir%/sunkctl-params.c \
	%reldir%/sunkctl-params.h \
	%reldir%/sunkctl-output.c \
	%reldir%/sunkctl-render.c \
	%reldir%/sunkctl-render.h \
	%reldir%/sunkctl-run.c \
	%reldir%/sunkctl-status.c \
	%reldir%/sunkctl-view.h \
	$(SUNKCTL_VIEW_SOURCES) \
	# End of libsunkctl_la_SOURCES
nodist_%canon_reldir%_libsunkctl_la_SOURCES = %reldir%/sunkctl-views.c
CLEANFILES += %reldir%/sunkctl-views.c
%canon_reldir%_libsunkctl_la_CFLAGS = $(AM_CFLAGS) $(JSONC_CFLAGS)
%canon_reldir%_libsunkctl_la_LIBADD = %reldir%/libsunkd-client.la $(JSONC_LIBS) -lm

%reldir%/sunkctl-views.c: Makefile
	$(AM_V_GEN)$(MKDIR_P) $(@D) && { \
	echo '/* Generated from SUNKCTL_VIEWS by agent/client/local.mk: do not edit. */'; \
	echo '#include "client/sunkctl-view.h"'; \
	for m in $(SUNKCTL_VIEWS); do echo "extern const SunkctlView sunkctl_view_$$m;"; done; \
	echo 'const SunkctlView *const sunkctl_views[] = {'; \
	for m in $(SUNKCTL_VIEWS); do echo "        &sunkctl_view_$$m,"; done; \
	echo '        NULL,'; echo '};'; } > $@.tmp && mv $@.tmp $@

bin_PROGRAMS += %reldir%/sunkctl
%canon_reldir%_sunkctl_SOURCES = %reldir%/sunkctl.c
%canon_reldir%_sunkctl_CFLAGS = $(AM_CFLAGS) $(JSONC_CFLAGS)
%canon_reldir%_sunkctl_LDADD = %reldir%/libsunkctl.la

# End of agent/client/local.mk
