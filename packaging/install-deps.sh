#!/bin/bash
# make deps: install the Debian packages sunkd's build and tests need.
#   install-deps.sh PACKAGE...
# Needs root (apt-get).  Waits for another apt or dpkg to finish instead of
# failing at once.  The tests start their own sshd, munged, slurmctld and
# slurmd on 127.0.0.1, so the daemons these packages bring are neither started
# (a policy-rc.d says no while installing, unless one is already there) nor
# left enabled at boot, when this run is what installed them.
set -eu
if [ "$(id -u)" != 0 ]; then
        echo "make deps: needs root to install packages (apt-get); run it as root or with sudo" >&2
        exit 2
fi
export DEBIAN_FRONTEND=noninteractive
APT=(apt-get -o DPkg::Lock::Timeout=600)

# Which packages are new: only their services are turned off afterwards.
new=()
for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || new+=("$p")
done

policy=/usr/sbin/policy-rc.d
own_policy=
if [ ! -e "$policy" ]; then
        printf '#!/bin/sh\n# sunkd make deps: no service starts while its packages install\nexit 101\n' > "$policy"
        chmod 755 "$policy"
        own_policy=1
        trap 'rm -f "$policy"' EXIT
fi

"${APT[@]}" update
"${APT[@]}" install -y --no-install-recommends "$@"

# Units of newly installed companions: the tests run their own copies.
units=()
for p in ${new[@]+"${new[@]}"}; do
        case "$p" in
        openssh-server) units+=(ssh.service ssh.socket) ;;
        munge) units+=(munge.service) ;;
        slurmctld) units+=(slurmctld.service) ;;
        slurmd) units+=(slurmd.service) ;;
        nginx-light) units+=(nginx.service) ;;
        esac
done
if [ ${#units[@]} -gt 0 ] && command -v systemctl >/dev/null; then
        if [ -d /run/systemd/system ]; then
                systemctl disable --now "${units[@]}" 2>/dev/null || true
        else
                systemctl disable "${units[@]}" 2>/dev/null || true
        fi
        echo "make deps: left ${units[*]} disabled and stopped (the tests start their own on 127.0.0.1)"
fi
[ -z "$own_policy" ] || echo "make deps: services were kept from starting during the install (policy-rc.d)"
