# modules/nsscache/: SCIM 2.0 users and groups to libnss-cache maps.

# Everything but the module entry, as a library the unit tests link.
noinst_LTLIBRARIES += %reldir%/libnsscache-scim.la
%canon_reldir%_libnsscache_scim_la_SOURCES = \
	%reldir%/nss-maps.c \
	%reldir%/nss-maps.h \
	%reldir%/nsscache-conf.c \
	%reldir%/nsscache-conf.h \
	%reldir%/scim-map.c \
	%reldir%/scim-map.h \
	%reldir%/scim-fetch.c \
	%reldir%/scim-fetch.h \
	# End of libnsscache_scim_la_SOURCES
%canon_reldir%_libnsscache_scim_la_CFLAGS = $(AM_CFLAGS) $(CURL_CFLAGS) $(JSONC_CFLAGS)
%canon_reldir%_libnsscache_scim_la_LIBADD = agent/libsunkd-util.la $(CURL_LIBS) $(JSONC_LIBS)

# End of modules/nsscache/local.mk
