#!/usr/bin/env bash
# CI: builds the container image without network (podman, its own storage
# on vfs, no daemon) and checks its contents honestly without running a
# container (these machines may lack the cgroups for one): the image's root
# file system is exported and its own entrypoint, as its own user, is run
# under chroot on the bundled sample. Asserts exit 0, a valid set, the
# stamped version, the CA certificates, a writable /tmp and a size < 30 MB.
set -euo pipefail
cd "$(dirname "$0")/.."

state=${IMAGE_STATE:-/tmp/sitemapgen-image-ci}
tag=localhost/sitemapgen:ci
version=ci-$(git rev-parse --short HEAD 2>/dev/null || echo none)
rm -rf "$state"
mkdir -p "$state/rootfs"
podman=(podman --root "$state/storage" --runroot "$state/run" --storage-driver vfs)
cleanup() {
  "${podman[@]}" rmi -f "$tag" >/dev/null 2>&1 || true
  rm -rf "$state"
}
trap cleanup EXIT

PODMAN_FLAGS="${podman[*]:1}" VERSION=$version deploy/image/build.sh "$tag" >"$state/build.log" 2>&1 ||
  { cat "$state/build.log"; exit 1; }

inspect() { "${podman[@]}" image inspect --format "$1" "$tag"; }
size=$(inspect '{{.Size}}')
user=$(inspect '{{.Config.User}}')
mapfile -t entrypoint < <(inspect '{{range .Config.Entrypoint}}{{println .}}{{end}}' | sed '/^$/d')
echo "image $tag: $((size / 1024 / 1024)) MiB, user $user, entrypoint ${entrypoint[*]}"
[ "$size" -lt $((30 * 1024 * 1024)) ] || { echo "image is $size bytes: over 30 MB"; exit 1; }
case $user in 0 | 0:* | root | root:* | "") echo "image runs as root ($user)"; exit 1 ;; esac

id=$("${podman[@]}" create "$tag")
"${podman[@]}" export "$id" | tar -x -C "$state/rootfs"
"${podman[@]}" rm "$id" >/dev/null
root=$state/rootfs

[ "$(stat -c %a "$root/tmp")" = 1777 ] || { echo "/tmp is not writable by all (mode $(stat -c %a "$root/tmp"))"; exit 1; }
certs=$(grep -c 'BEGIN CERTIFICATE' "$root/etc/ssl/certs/ca-certificates.crt" || true)
[ "$certs" -gt 50 ] || { echo "the image holds $certs CA certificates"; exit 1; }
grep -q "^[^:]*:x:${user%%:*}:" "$root/etc/passwd" || { echo "no /etc/passwd entry for user $user"; exit 1; }

in_image() { chroot --userspec="$user" "$root" "${entrypoint[@]}" "$@"; }
got=$(in_image version)
[ "$got" = "sitemapgen $version" ] || { echo "version: got '$got', want 'sitemapgen $version'"; exit 1; }
cp testdata/sample.csv "$root/tmp/sample.csv"
in_image generate --public-url https://www.example.com/ --out /tmp/out --report /tmp/report.json /tmp/sample.csv
in_image validate --public-url https://www.example.com/ /tmp/out/sitemap.xml
grep -q '"published": true' "$root/tmp/report.json" || { echo "the report does not say published"; exit 1; }
echo "image OK: the entrypoint, as $user, wrote a valid set from the sample"
