# /dev/nvidiaN for the fake NVML's GPUs (sourced after tap.sh): symlinks to
# /dev/null where no device is, since slurmd checks the File= of gres.conf.
# /dev is shared by the tests that run at once, so each takes one lock for
# its whole run: no test's cleanup removes a device another still uses.
#
# fake_nvidia_devs MINOR...   take the lock, create the missing devices
# fake_nvidia_devs_cleanup    remove what fake_nvidia_devs created
#
# The lock is fd 7, inherited by what the test starts: it is released when
# the test and its daemons have exited.

FAKE_NVIDIA_LOCK=/tmp/sunkd-test-dev-nvidia.lock
FAKE_NVIDIA_DEVS=

fake_nvidia_devs() {
        local m
        exec 7>> "$FAKE_NVIDIA_LOCK" || bail_out "cannot open $FAKE_NVIDIA_LOCK"
        flock -w 600 7 || bail_out "cannot lock $FAKE_NVIDIA_LOCK"
        for m in "$@"; do
                [ -e "/dev/nvidia$m" ] && continue
                ln -s /dev/null "/dev/nvidia$m" || bail_out "cannot create /dev/nvidia$m"
                FAKE_NVIDIA_DEVS="$FAKE_NVIDIA_DEVS /dev/nvidia$m"
        done
}

fake_nvidia_devs_cleanup() {
        local d
        for d in $FAKE_NVIDIA_DEVS; do rm -f "$d"; done
        FAKE_NVIDIA_DEVS=
}
