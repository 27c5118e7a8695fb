#!/usr/bin/env bash
# Builds a release of surge into a folder: a static binary per target
# (CGO_ENABLED=0, stamped with the tag, commit and date), their SHA256
# checksums and an SBOM of each (CycloneDX, from the binary's own module
# list). .github/workflows/release.yml runs it on a tag; release_test.go
# runs it here for the host's target.
#
#   release/build.sh TAG OUT            every target
#   TARGETS="linux/amd64" release/build.sh TAG OUT
set -euo pipefail
cd "$(dirname "$0")/.."

tag="${1:?usage: release/build.sh TAG OUT}"
out="${2:?usage: release/build.sh TAG OUT}"
targets="${TARGETS:-linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64}"
commit="$(git rev-parse HEAD)"
date="$(git show -s --format=%cI HEAD | sed 's/+00:00$/Z/')"
ldflags="-s -w -X main.version=${tag} -X main.commit=${commit} -X main.date=${date}"

mkdir -p "$out"
for t in $targets; do
  os="${t%/*}" arch="${t#*/}"
  name="surge_${os}_${arch}"
  [ "$os" = windows ] && name="${name}.exe"
  echo "== $name"
  CGO_ENABLED=0 GOOS="$os" GOARCH="$arch" go build -trimpath -buildvcs=false -ldflags "$ldflags" -o "$out/$name" .
  go run ./release/sbom -version "$tag" "$out/$name" > "$out/$name.cdx.json"
done
(cd "$out" && sha256sum surge_* > SHA256SUMS)
echo "== $out"
ls -l "$out"
