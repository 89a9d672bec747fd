# modules/authkeys/: sshd's AuthorizedKeysCommand answered from memory.

# Key validation, fingerprints and the sshkey map.  A convenience library so
# the module, its client and the tests link the same objects.
noinst_LTLIBRARIES += %reldir%/libauthkeys.la
%canon_reldir%_libauthkeys_la_SOURCES = \
	%reldir%/authkeys-key.c \
	%reldir%/authkeys-key.h \
	%reldir%/authkeys-map.c \
	%reldir%/authkeys-map.h \
	# End of libauthkeys_la_SOURCES
%canon_reldir%_libauthkeys_la_CFLAGS = $(AM_CFLAGS) $(CRYPTO_CFLAGS)
%canon_reldir%_libauthkeys_la_LIBADD = agent/libsunkd-util.la $(CRYPTO_LIBS)

# End of modules/authkeys/local.mk
