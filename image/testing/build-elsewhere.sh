#!/usr/bin/env bash
# image/testing/build-elsewhere.sh: a second checkout of the same sources in another folder,
# built from nothing of the first build folder, writes the package image archives there
# (build-image.sh --no-load: no Docker needed). image_repro_tests compares their IDs with the
# first build's.
#
#   build-elsewhere.sh SOURCE_DIR FIRST_BINARY_DIR CACHE_DIR OUT_DIR
#
# - The second checkout is `git clone --shared` of SOURCE_DIR at its HEAD commit, into a fresh
#   temporary folder (another path, another length, outside the first checkout). Changes not yet
#   committed (tracked and untracked, not ignored) are copied over it, so the two folders hold the
#   same sources while one works on them; under CI the tree is clean and this copies nothing.
# - Its build folder sits beside it (not inside it, unlike build/<preset>), and it is configured
#   without a compiler launcher: ccache's base_dir would hand the compiler relative paths in one
#   build and absolute ones in the other, which the path maps must cover too.
# - BoringSSL is the one expensive part: its source is copied once to CACHE_DIR/deps/src (another
#   path than the first build's) and built there by cmake/BoringSSL.cmake, which rebuilds it when
#   its recipe changes. Nothing else is reused.
# - The configuration follows FIRST_BINARY_DIR's cache (build type, compilers, the image inputs
#   and labels), since those decide the bytes as much as the sources do.
# - OUT_DIR receives gatekeeper.{id,tar}, space-default.{id,tar} and the stripped gatekeeper.
set -euo pipefail
[ $# -eq 4 ] || { echo "usage: build-elsewhere.sh SOURCE_DIR FIRST_BINARY_DIR CACHE_DIR OUT_DIR" >&2; exit 2; }
source_dir=$1 first=$2 cache=$3 out=$4
die() { echo "build-elsewhere.sh: $*" >&2; exit 1; }

cache_value() {  # NAME: its value in the first build's CMakeCache.txt
  sed -n "s/^$1:[A-Z]*=//p" "$first/CMakeCache.txt" | head -1
}
[ -r "$first/CMakeCache.txt" ] || die "$first/CMakeCache.txt: cannot read (configure the first build)"
first_deps=$(cache_value GK_DEPS_DIR)
bssl_src=$(compgen -G "$first_deps/src/android-platform-external-boringssl-*/android-sources.cmake" | head -1) ||
  die "no BoringSSL source under $first_deps/src (run .ci/setup)"
bssl_src=$(dirname "$bssl_src")

work=$(mktemp -d /tmp/gk-repro-second-checkout.XXXXXX)
trap 'rm -rf "$work"' EXIT
src=$work/sources-of-the-second-checkout
build=$work/build

head=$(git -C "$source_dir" rev-parse --verify HEAD) || die "git -C $source_dir rev-parse HEAD: failed"
git clone --quiet --shared --no-checkout "$source_dir" "$src" || die "git clone --shared $source_dir: failed"
git -C "$src" -c advice.detachedHead=false checkout --quiet "$head" || die "checkout $head in $src: failed"
# The work in progress of the first checkout, if any: tracked changes, then untracked files.
git -C "$source_dir" diff --binary HEAD > "$work/changes.diff"
if [ -s "$work/changes.diff" ]; then
  git -C "$src" apply --binary "$work/changes.diff" || die "git apply of the uncommitted changes in $src: failed"
fi
(cd "$source_dir" && git ls-files -z --others --exclude-standard | tar --null -T - -cf -) | tar -C "$src" -xf -

# BoringSSL's source, once per cache folder; cmake/BoringSSL.cmake keeps what it builds there.
mkdir -p "$cache/deps/src"
if [ ! -d "$cache/deps/src/$(basename "$bssl_src")" ]; then
  rm -rf "$cache/deps/src/.copy"
  cp -a "$bssl_src" "$cache/deps/src/.copy"
  mv "$cache/deps/src/.copy" "$cache/deps/src/$(basename "$bssl_src")"
fi

defines=(-DGK_DEPS_DIR="$cache/deps")
for v in CMAKE_BUILD_TYPE CMAKE_C_COMPILER CMAKE_CXX_COMPILER GK_IMAGE_SOURCE_URL GK_CA_BUNDLE \
         GK_BUSYBOX GK_SPACE_LIBDIR GK_SPACE_GIT LLHTTP_SOURCE_DIR LLHTTP_INCLUDE_DIR; do
  defines+=("-D$v=$(cache_value "$v")")
done
echo "build-elsewhere.sh: second checkout $src (commit $head), build folder $build"
env -u CMAKE_C_COMPILER_LAUNCHER -u CMAKE_CXX_COMPILER_LAUNCHER -u CCACHE_BASEDIR \
  cmake -G Ninja -S "$src" -B "$build" "${defines[@]}" > "$work/configure.log" 2>&1 ||
  { tail -30 "$work/configure.log" >&2; die "configure of $src failed"; }
jobs=${GK_REPRO_JOBS:-2}
cmake --build "$build" --target image-archives -- -j"$jobs" > "$work/build.log" 2>&1 ||
  { grep -v 'in statically linked applications requires' "$work/build.log" | tail -30 >&2; die "build of $src failed"; }

mkdir -p "$out"
for f in gatekeeper.id gatekeeper.tar space-default.id space-default.tar; do
  cp "$build/package-images/$f" "$out/$f"
done
cp "$build/image/stripped/gatekeeper" "$out/gatekeeper"
echo "build-elsewhere.sh: gatekeeper $(cat "$out/gatekeeper.id"), space-default $(cat "$out/space-default.id")"
