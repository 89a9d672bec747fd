# etc/

EXTRA_DIST += %reldir%/nsscache.conf.example

# End of etc/local.mk
