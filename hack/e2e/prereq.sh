#!/usr/bin/env bash
# prereq.sh: checks that this machine can run containers and installs what
# is missing. Refuses, naming what is missing, when it is not run as root,
# when a package must be installed and there is no apt-get, when the kernel
# has no overlay file system or an overlay mount fails, or when no cgroup
# file system is mounted. Installs Debian's containerd, runc and
# busybox-static with apt-get when their commands are missing.
set -euo pipefail
. "$(dirname "$0")/common.sh"

missing=()
[ "$(id -u)" -eq 0 ] || missing+=("root: run as root (containerd, runc and overlay mounts need it); uid is $(id -u)")
for tool in go tar sha256sum mount umount awk; do
	command -v "$tool" >/dev/null || missing+=("the command $tool")
done

# Packages first: the kernel checks below need no package, but fail fast on
# everything at once.
need=()
for pc in "${E2E_PACKAGES[@]}"; do
	command -v "${pc#*:}" >/dev/null || need+=("${pc%%:*}")
done
command -v ctr >/dev/null || [[ " ${need[*]-} " == *" containerd "* ]] || need+=(containerd)
if [ ${#need[@]} -gt 0 ] && ! command -v apt-get >/dev/null; then
	missing+=("apt-get, to install the Debian packages ${need[*]}")
fi

# overlay: in /proc/filesystems and a test mount works (a container's root
# file system is one).
if ! grep -qw overlay /proc/filesystems; then
	modprobe overlay 2>/dev/null || true
fi
if ! grep -qw overlay /proc/filesystems; then
	missing+=("overlay support: the kernel lists no overlay file system in /proc/filesystems (modprobe overlay failed)")
elif [ "$(id -u)" -eq 0 ]; then
	t=$(mktemp -d)
	mkdir "$t/lower" "$t/upper" "$t/work" "$t/merged"
	if mount -t overlay overlay -o "lowerdir=$t/lower,upperdir=$t/upper,workdir=$t/work" "$t/merged" 2>"$t/err"; then
		umount "$t/merged"
	else
		missing+=("overlay support: a test overlay mount failed: $(cat "$t/err")")
	fi
	rm -rf "$t"
fi

# cgroups: runc's cgroupfs driver needs a mounted cgroup (v1 or v2) file system.
if ! grep -qwE 'cgroup2?' /proc/filesystems; then
	missing+=("cgroup support: the kernel lists no cgroup or cgroup2 file system in /proc/filesystems")
elif ! awk '$9 == "cgroup" || $9 == "cgroup2" { found = 1 } END { exit !found }' /proc/self/mountinfo; then
	missing+=("cgroup support: no cgroup or cgroup2 file system is mounted (expected under /sys/fs/cgroup)")
fi

if [ ${#missing[@]} -gt 0 ]; then
	printf 'e2e: cannot run the end-to-end suite against containerd; missing:\n' >&2
	printf '  - %s\n' "${missing[@]}" >&2
	exit 1
fi

if [ ${#need[@]} -gt 0 ]; then
	log "installing the Debian packages ${need[*]}"
	export DEBIAN_FRONTEND=noninteractive
	# An old or empty package list cannot find them: update first.
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
for pc in "${E2E_PACKAGES[@]}" containerd:ctr containerd:containerd-shim-runc-v2; do
	command -v "${pc#*:}" >/dev/null || die "the package ${pc%%:*} is installed but the command ${pc#*:} is still missing"
done
log "prerequisites: $(containerd --version | awk '{print $1, $3}'), $(runc --version | awk 'NR == 1'), $(busybox 2>/dev/null | awk 'NR == 1 {print $1, $2}')"
