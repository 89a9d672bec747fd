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

bin_PROGRAMS += %reldir%/sunkctl
%canon_reldir%_sunkctl_SOURCES = %reldir%/sunkctl.c
%canon_reldir%_sunkctl_CFLAGS = $(AM_CFLAGS) $(JSONC_CFLAGS)
%canon_reldir%_sunkctl_LDADD = %reldir%/libsunkd-client.la

# End of agent/client/local.mk
