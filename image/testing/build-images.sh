#!/usr/bin/env bash
# ctest fixture of the docker-labelled image tests: build the `images` target (write and load the
# images) when a Docker engine answers. Without one, locally it only says so (the docker tests
# then skip); under CI=true it fails, so a CI machine without an engine cannot pass.
#   build-images.sh CMAKE_COMMAND BINARY_DIR
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: build-images.sh CMAKE_COMMAND BINARY_DIR" >&2; exit 2; }
if ! docker info >/dev/null 2>&1; then
  if [ "${CI:-}" = true ]; then
    echo "no Docker engine answers: images not built, and CI=true needs them" >&2
    exit 1
  fi
  echo "no Docker engine answers: images not built; image_docker_tests will skip"
  exit 0
fi
exec "$1" --build "$2" --target images
