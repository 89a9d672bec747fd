# modules/authkeys/: sshd's AuthorizedKeysCommand answered from memory.

# Key validation, fingerprints and the sshkey map.  A convenience library so
# the module, its client and the tests link the same objects.
# libauthkeys-core has no crypto of its own (authkeys-crypto.h): libauthkeys
# adds libcrypto, linked; sunkd-authkeys loads it only when it needs it.
noinst_LTLIBRARIES += %reldir%/libauthkeys-core.la
%canon_reldir%_libauthkeys_core_la_SOURCES = \
	%reldir%/authkeys-crypto.h \
	%reldir%/authkeys-key.c \
	%reldir%/authkeys-key.h \
	%reldir%/authkeys-local.c \
	%reldir%/authkeys-local.h \
	%reldir%/authkeys-map.c \
	%reldir%/authkeys-map.h \
	# End of libauthkeys_core_la_SOURCES
%canon_reldir%_libauthkeys_core_la_LIBADD = agent/libsunkd-modutil.la agent/libsunkd-util.la

noinst_LTLIBRARIES += %reldir%/libauthkeys.la
%canon_reldir%_libauthkeys_la_SOURCES = %reldir%/authkeys-crypto.c
%canon_reldir%_libauthkeys_la_CFLAGS = $(AM_CFLAGS) $(CRYPTO_CFLAGS)
%canon_reldir%_libauthkeys_la_LIBADD = %reldir%/libauthkeys-core.la $(CRYPTO_LIBS)

pkglib_LTLIBRARIES += %reldir%/authkeys.la
%canon_reldir%_authkeys_la_SOURCES = \
	%reldir%/authkeys.c \
	%reldir%/authkeys-state.h \
	%reldir%/authkeys-load.c \
	%reldir%/authkeys-get.c \
	# End of authkeys_la_SOURCES
%canon_reldir%_authkeys_la_CFLAGS = $(AM_CFLAGS) $(JSONC_CFLAGS) $(CRYPTO_CFLAGS)
%canon_reldir%_authkeys_la_LDFLAGS = $(MODULE_LINK_FLAGS)
%canon_reldir%_authkeys_la_LIBADD = %reldir%/libauthkeys.la $(JSONC_LIBS) $(CRYPTO_LIBS)

# sshd's AuthorizedKeysCommand: the socket client and the key checks only (no
# libcurl, libyaml, libsystemd, nor libcrypto until it must check keys
# itself); exec'd once or twice per login.
pkglibexec_PROGRAMS += %reldir%/sunkd-authkeys
%canon_reldir%_sunkd_authkeys_SOURCES = %reldir%/sunkd-authkeys.c %reldir%/authkeys-crypto-dl.c
%canon_reldir%_sunkd_authkeys_CFLAGS = $(AM_CFLAGS) $(JSONC_CFLAGS)
%canon_reldir%_sunkd_authkeys_LDADD = agent/client/libsunkd-client.la %reldir%/libauthkeys-core.la $(JSONC_LIBS) -ldl

# sunkctl's view of the module's answers (client/sunkctl-view.h), linked
# into sunkctl, which lists it in its generated table.
SUNKCTL_VIEWS += authkeys
SUNKCTL_VIEW_SOURCES += %reldir%/authkeys-render.c

# End of modules/authkeys/local.mk
