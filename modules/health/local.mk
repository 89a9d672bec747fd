# modules/health/: node health checks that drain and resume the node in slurmctld.

# The built-in check types and the JWT minting: a convenience library the
# module and its tests link; the consumer links agent/libsunkd-util.la itself.
noinst_LTLIBRARIES += %reldir%/libhealth.la
%canon_reldir%_libhealth_la_SOURCES = \
	%reldir%/health-check.c \
	%reldir%/health-check.h \
	%reldir%/check-util.c \
	%reldir%/check-util.h \
	%reldir%/check-mount.c \
	%reldir%/check-disk-free.c \
	%reldir%/check-inodes-free.c \
	%reldir%/check-memory.c \
	%reldir%/check-process.c \
	%reldir%/check-file.c \
	%reldir%/check-load.c \
	%reldir%/check-ib.c \
	%reldir%/check-munge.c \
	%reldir%/health-jwt.c \
	%reldir%/health-jwt.h \
	# End of libhealth_la_SOURCES
%canon_reldir%_libhealth_la_CFLAGS = $(AM_CFLAGS) $(CRYPTO_CFLAGS)
%canon_reldir%_libhealth_la_LIBADD = $(MUNGE_LIBS) $(CRYPTO_LIBS)

# End of modules/health/local.mk
