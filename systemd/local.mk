# systemd/

# End of systemd/local.mk
