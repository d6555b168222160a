#!/usr/bin/env bash
# images.sh: builds the two images the suite needs from Debian's static
# busybox, without a registry or docker, and imports them into the private
# containerd (which must be running: see up.sh):
#
#   docker.io/library/busybox:1.36  /bin/busybox with every applet linked
#                                   (/bin/sh, /bin/sleep, ...); Cmd sh
#   registry.k8s.io/pause:3.10      the sandbox image the CRI plugin is
#                                   configured with; sleeps forever
#
# Each is an OCI image layout (oci-layout, index.json, blobs/sha256) with one
# uncompressed layer, tarred reproducibly (fixed owner and times, sorted
# names) so that the same busybox always gives the same digests, and named by
# the io.containerd.image.name annotation that 'ctr images import' reads.
# The busybox image is a stand-in named as the suite's default image: its
# busybox is Debian's (1.35), not 1.36.
set -euo pipefail
. "$(dirname "$0")/common.sh"

bb=$(command -v busybox) || die "busybox is missing: run hack/e2e/prereq.sh"
file_is_static() { ! ldd "$1" >/dev/null 2>&1; }
file_is_static "$bb" || die "$bb is not statically linked: the images need busybox-static's binary"

rm -rf "$E2E_IMAGES"
mkdir -p "$E2E_IMAGES"
work=$(mktemp -d "$E2E_IMAGES/build.XXXXXX")

tar_dir() { # DIR OUT: a reproducible tar of DIR's contents
	tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner --format=gnu \
		-C "$1" -cf "$2" .
}

# blob FILE MEDIATYPE: moves FILE into the layout's blobs and prints its
# descriptor JSON.
blob() {
	local sum size
	sum=$(sha256sum "$1" | awk '{print $1}')
	size=$(stat -c %s "$1")
	mkdir -p "$layout/blobs/sha256"
	mv "$1" "$layout/blobs/sha256/$sum"
	printf '{"mediaType":"%s","digest":"sha256:%s","size":%s}' "$2" "$sum" "$size"
}

# rootfs DIR: the file system shared by both images: busybox and the
# directories a container runtime mounts over.
rootfs() {
	mkdir -p "$1"/{bin,dev,etc,proc,sys,tmp,root,var/run}
	chmod 1777 "$1/tmp"
	cp "$bb" "$1/bin/busybox"
	printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n' >"$1/etc/passwd"
	printf 'root:x:0:\nnogroup:x:65534:\n' >"$1/etc/group"
}

# image NAME ROOTFS CONFIGJSON OUT: writes the OCI layout tarball OUT.
image() {
	local name=$1 fs=$2 cfg=$3 out=$4 layer diffid config manifest
	layout=$(mktemp -d "$work/layout.XXXXXX")
	tar_dir "$fs" "$work/layer.tar"
	diffid=sha256:$(sha256sum "$work/layer.tar" | awk '{print $1}')
	layer=$(blob "$work/layer.tar" application/vnd.oci.image.layer.v1.tar)
	printf '{"architecture":"%s","os":"linux","config":%s,"rootfs":{"type":"layers","diff_ids":["%s"]},"history":[{"created":"1970-01-01T00:00:00Z","created_by":"hack/e2e/images.sh from %s"}]}' \
		"$(go env GOARCH)" "$cfg" "$diffid" "$(busybox 2>/dev/null | awk 'NR == 1 {print $1, $2}')" >"$work/config.json"
	config=$(blob "$work/config.json" application/vnd.oci.image.config.v1+json)
	printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":%s,"layers":[%s]}' \
		"$config" "$layer" >"$work/manifest.json"
	manifest=$(blob "$work/manifest.json" application/vnd.oci.image.manifest.v1+json)
	manifest=${manifest%\}}',"annotations":{"io.containerd.image.name":"'"$name"'","org.opencontainers.image.ref.name":"'"${name##*:}"'"}}'
	printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[%s]}' "$manifest" >"$layout/index.json"
	printf '{"imageLayoutVersion":"1.0.0"}' >"$layout/oci-layout"
	tar_dir "$layout" "$out"
	rm -rf "$layout"
}

path='"Env":["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"]'

# busybox: every applet a symlink to busybox, in /bin.
rootfs "$work/busybox"
for applet in $("$bb" --list); do
	[ "$applet" = busybox ] || ln -s busybox "$work/busybox/bin/$applet"
done
image "$E2E_BUSYBOX_IMAGE" "$work/busybox" "{$path,\"Cmd\":[\"sh\"]}" "$E2E_IMAGES/busybox.tar"

# pause: busybox's sleep, forever. A sandbox is stopped with SIGKILL, so it
# needs no signal handler.
rootfs "$work/pause"
ln -s busybox "$work/pause/bin/sleep"
image "$E2E_PAUSE_IMAGE" "$work/pause" "{$path,\"Entrypoint\":[\"/bin/sleep\",\"infinity\"]}" "$E2E_IMAGES/pause.tar"
rm -rf "$work"

[ -S "$E2E_SOCK" ] || die "containerd is not running at $E2E_SOCK: run hack/e2e/up.sh first"
for img in busybox pause; do
	ctr_ images import --snapshotter overlayfs "$E2E_IMAGES/$img.tar" >/dev/null
done
# The list is read whole: 'grep -q' in a pipe would stop reading at the first
# match, and ctr's SIGPIPE would fail the pipeline under pipefail.
images=$(ctr_ images ls -q)
for name in "$E2E_BUSYBOX_IMAGE" "$E2E_PAUSE_IMAGE"; do
	grep -qxF "$name" <<<"$images" || die "image $name is not in containerd after the import (it has: $(echo $images))"
done
log "images imported: $E2E_BUSYBOX_IMAGE, $E2E_PAUSE_IMAGE"
