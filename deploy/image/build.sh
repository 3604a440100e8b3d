#!/usr/bin/env bash
# Builds the sitemapgen image without network: compiles the static binary
# (CGO off, version stamped), stages it with the CA certificates of this
# host, an /etc/passwd naming the non-root user and a writable /tmp, and
# builds the Containerfile FROM scratch over them.
#
#   deploy/image/build.sh [TAG]        (default sitemapgen:VERSION)
#
# VERSION (default: git describe) is stamped into the binary and the image's
# label. CONTAINER picks the builder (default podman; docker works too);
# PODMAN_FLAGS are given to it before "build" (CI: its own storage).
set -euo pipefail
cd "$(dirname "$0")/../.."

version=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo devel)}
tag=${1:-sitemapgen:$version}
certs=${CA_CERTS:-/etc/ssl/certs/ca-certificates.crt}
if [ ! -s "$certs" ]; then
  echo "build.sh: no CA certificates at $certs (apt-get install ca-certificates, or set CA_CERTS)" >&2
  exit 1
fi

ctx=$(mktemp -d)
trap 'rm -rf "$ctx"' EXIT
root=$ctx/rootfs
mkdir -p "$root/usr/local/bin" "$root/etc/ssl/certs" "$root/tmp"
chmod 1777 "$root/tmp"
CGO_ENABLED=0 go build -ldflags "-s -w -X main.version=$version" -o "$root/usr/local/bin/sitemapgen" ./cmd/sitemapgen
cp "$certs" "$root/etc/ssl/certs/ca-certificates.crt"
printf 'root:x:0:0:root:/:/sbin/nologin\nsitemapgen:x:65532:65532:sitemapgen:/tmp:/sbin/nologin\n' >"$root/etc/passwd"
printf 'root:x:0:\nsitemapgen:x:65532:\n' >"$root/etc/group"
cp Containerfile "$ctx/Containerfile"

# shellcheck disable=SC2086 # PODMAN_FLAGS is a list of flags
${CONTAINER:-podman} ${PODMAN_FLAGS:-} build --build-arg "VERSION=$version" -t "$tag" -f "$ctx/Containerfile" "$ctx"
echo "built $tag (sitemapgen $version)"
