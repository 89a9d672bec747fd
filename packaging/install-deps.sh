#!/bin/bash
# make deps: install the Debian packages sunkd's build and tests need, and
# s3rver (npm), the S3-compatible server the s3 tests run.
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

# s3rver under /opt/sunkd-test (tests/lib/s3rver.sh): node and npm from Debian
# unless a node with npm is there already (NodeSource's nodejs brings its own).
S3RVER_VERSION=3.7.1
S3RVER_PREFIX=/opt/sunkd-test
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
        "${APT[@]}" install -y --no-install-recommends nodejs npm
fi
if ! grep -qs "\"version\": \"$S3RVER_VERSION\"" "$S3RVER_PREFIX/node_modules/s3rver/package.json"; then
        mkdir -p "$S3RVER_PREFIX"
        npm install --prefix "$S3RVER_PREFIX" --no-audit --no-fund --omit=dev "s3rver@$S3RVER_VERSION" ||
                { echo "make deps: npm could not install s3rver@$S3RVER_VERSION into $S3RVER_PREFIX" >&2; exit 1; }
fi

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
