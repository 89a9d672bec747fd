# etc/: example configuration.

# nsscache.conf.example, the file Deploy step 2 installs as /etc/nsscache.conf
# where a node has none: with the documentation, where a package puts it.
sunkdexamplesdir = $(docdir)/examples
dist_sunkdexamples_DATA = %reldir%/nsscache.conf.example
# make demo's configuration and SCIM data (tests/demo.sh.in).
EXTRA_DIST += %reldir%/demo/sunkd.yaml.in %reldir%/demo/scim-data.json

# sunkd.yaml is written for the usual paths (/etc, /usr/lib/sunkd,
# /var/lib/sunkd); the installed copy names the configured ones.  It is
# installed as an example, never over an operator's sunkd.yaml.
sunkdconfdir = $(sysconfdir)/sunkd
sunkdconf_DATA = %reldir%/sunkd.yaml.example
EXTRA_DIST += %reldir%/sunkd.yaml
CLEANFILES += %reldir%/sunkd.yaml.example

%reldir%/sunkd.yaml.example: $(top_srcdir)/%reldir%/sunkd.yaml Makefile
	$(AM_V_GEN)$(MKDIR_P) $(@D) && $(SED) -e 's|/etc/sunkd/|$(sysconfdir)/sunkd/|g' \
		-e 's|/etc/nsscache\.conf|$(sysconfdir)/nsscache.conf|g' \
		-e 's|/var/lib/sunkd|$(localstatedir)/lib/sunkd|g' -e 's|/usr/lib/sunkd|$(pkglibdir)|g' \
		< $(top_srcdir)/%reldir%/sunkd.yaml > $@.tmp && mv $@.tmp $@

# End of etc/local.mk
