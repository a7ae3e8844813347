#!/usr/bin/env bash
# image/build-image.sh: writes a Docker image archive (docker-archive format: manifest.json, one
# config JSON, one layer tar) byte for byte from its inputs, then `docker load`s it and checks that
# the engine kept our image ID.
#
# Why not `docker build`: Debian's Docker 20.10 has no BuildKit, and the legacy builder stamps the
# build time into the config, so two builds of one commit get two IDs. Here every byte comes from
# the inputs: entries in C-locale path order, mtimes = SOURCE_DATE_EPOCH, owners and modes as
# declared, ustar headers (no extended headers, so nothing host-specific such as atime, ctime, a
# user name or a PID can slip in). Image ID = sha256 of the config bytes; the config names the
# layer by the sha256 of the uncompressed layer tar (its diff_id), and `docker load` keeps both.
#
# Why not a packaged image tool (checked with Debian 12's): umoci 0.4.7 writes an OCI layout
# (index.json and gzip blobs), which Docker 20.10's `docker load` cannot read; its layer adds a "."
# entry stamped with the bundle's mtime, and its config has its own key order and a nanosecond
# `created`, so neither the layer's diff_id nor the config digest (the image ID) can equal what
# this script writes (tried: `umoci new`, `unpack`, `repack --no-history`). buildah 1.28 (not
# tried) fixes the times with `--timestamp` but writes its own config fields and history into
# containers-storage, from which the image would have to be exported again; the same mismatch.
#
# Build-time tool only: it never ships, never touches the network, and the images it writes hold
# exactly the entries declared on its command line (parents too; nothing is added implicitly).
#
# usage: build-image.sh [options]       (see usage() below; --args-file reads options from a file)
set -euo pipefail
umask 022
export LC_ALL=C TZ=UTC

readonly self=build-image.sh

die() { printf '%s: %s\n' "$self" "$*" >&2; exit 1; }

usage() {
  cat <<'EOF'
usage: build-image.sh --out DIR --name NAME [options]
Entries (each parent directory must be declared too; paths are absolute, [A-Za-z0-9._+-/] only):
  --dir PATH:MODE:UID:GID           a directory
  --file PATH:MODE:UID:GID:SOURCE   a regular file copied from SOURCE (SOURCE may contain ':')
  --symlink PATH:TARGET             a symbolic link (mode 0777, owner 0:0)
Config:
  --user UID[:GID]   numeric only     --entrypoint ARG (repeat)   --cmd ARG (repeat)
  --env KEY=VALUE (repeat)            --workdir PATH              --label KEY=VALUE (repeat)
  --tag REPO:TAG (repeat)             --arch amd64|arm64 (default: from uname -m)
Provenance:
  --source-dir DIR   git checkout that gives SOURCE_DATE_EPOCH (commit time of HEAD) and the
                     revision label; SOURCE_DATE_EPOCH in the environment wins; outside git the
                     epoch is 0 and the revision "unknown". The labels org.opencontainers.image.created
                     and .revision are always added from these.
Output:
  --out DIR          writes DIR/NAME.tar (the archive), DIR/NAME.id, DIR/NAME.manifest
  --id-file FILE     also write the image ID ("sha256:<64 hex>\n") to FILE, after the load check
  --expect-manifest FILE   fail unless the entry listing equals FILE ('#' lines and blanks ignored)
  --no-load          do not run docker (the ID is still computed and written)
  --args-file FILE   read further arguments from FILE, one per line ('#' lines and blanks ignored)
EOF
  exit 2
}

# ---- arguments -------------------------------------------------------------------------------
argv=()
expand_args() {
  while [ $# -gt 0 ]; do
    if [ "$1" = --args-file ]; then
      [ $# -ge 2 ] || die "--args-file needs a FILE"
      [ -r "$2" ] || die "--args-file $2: cannot read"
      local line
      while IFS= read -r line || [ -n "$line" ]; do
        case "$line" in ''|'#'*) continue ;; esac
        argv+=("$line")
      done < "$2"
      shift 2
    else
      argv+=("$1"); shift
    fi
  done
}
expand_args "$@"

out='' name='' user='' workdir='' arch='' source_dir='' id_file='' expect_manifest='' load=1
entrypoint=() cmd=() envs=() labels=() tags=()
declare -A kind=() mode=() owner=() source=() target=()

valid_path() {
  [[ "$1" =~ ^(/[A-Za-z0-9._+-]+)+$ ]] || return 1
  [[ "$1" != */./* && "$1" != */../* && "$1" != */. && "$1" != */.. ]]
}

add_entry() {  # kind path mode owner
  valid_path "$2" || die "entry '$2': not an absolute path of [A-Za-z0-9._+-] components"
  [ -z "${kind[$2]+x}" ] || die "entry '$2': declared twice"
  kind[$2]=$1; mode[$2]=$3; owner[$2]=$4
}

parse_mode_owner() {  # "MODE:UID:GID" -> sets pm, po
  local spec=$1 m u g
  IFS=: read -r m u g <<< "$spec"
  [[ "$m" =~ ^0?[0-7]{3,4}$ ]] || die "mode '$m' in '$spec': expected octal such as 0755"
  [[ "$u" =~ ^[0-9]+$ && "$g" =~ ^[0-9]+$ ]] || die "owner in '$spec': expected numeric UID:GID"
  pm=$(printf '%04o' $((8#$m))); po="$u:$g"
}

set -- "${argv[@]}"
while [ $# -gt 0 ]; do
  opt=$1
  case "$opt" in
    --no-load) load=0; shift; continue ;;
    -h|--help) usage ;;
  esac
  [ $# -ge 2 ] || die "$opt needs a value"
  val=$2; shift 2
  case "$opt" in
    --out) out=$val ;;
    --name) name=$val ;;
    --dir)
      path=${val%%:*}; parse_mode_owner "${val#*:}"; add_entry dir "$path" "$pm" "$po" ;;
    --file)
      IFS=: read -r path m u g src <<< "$val"
      [ -n "$src" ] || die "--file '$val': expected PATH:MODE:UID:GID:SOURCE"
      parse_mode_owner "$m:$u:$g"; add_entry file "$path" "$pm" "$po"; source[$path]=$src ;;
    --symlink)
      path=${val%%:*}; tgt=${val#*:}
      [[ "$tgt" =~ ^[A-Za-z0-9._+/-]+$ ]] || die "--symlink '$val': bad target"
      add_entry symlink "$path" 0777 0:0; target[$path]=$tgt ;;
    --user)
      [[ "$val" =~ ^[0-9]+(:[0-9]+)?$ ]] || die "--user '$val': numeric UID[:GID] only"
      user=$val ;;
    --entrypoint) entrypoint+=("$val") ;;
    --cmd) cmd+=("$val") ;;
    --env) [[ "$val" =~ ^[A-Za-z_][A-Za-z0-9_]*= ]] || die "--env '$val': expected KEY=VALUE"
      envs+=("$val") ;;
    --workdir) valid_path "$val" || [ "$val" = / ] || die "--workdir '$val': bad path"
      workdir=$val ;;
    --label) [[ "$val" =~ ^[A-Za-z0-9._-]+= ]] || die "--label '$val': expected KEY=VALUE"
      labels+=("$val") ;;
    --tag) [[ "$val" =~ ^[a-z0-9._/-]+:[A-Za-z0-9._-]+$ ]] || die "--tag '$val': expected REPO:TAG"
      tags+=("$val") ;;
    --arch) arch=$val ;;
    --source-dir) source_dir=$val ;;
    --id-file) id_file=$val ;;
    --expect-manifest) expect_manifest=$val ;;
    *) die "unknown option '$opt' (--help lists them)" ;;
  esac
done

[ -n "$out" ] || die "--out is required"
[[ "$name" =~ ^[A-Za-z0-9._-]+$ ]] || die "--name '$name': expected [A-Za-z0-9._-]+"
[ ${#kind[@]} -gt 0 ] || die "no entries: an image needs at least one --file, --dir or --symlink"

if [ -z "$arch" ]; then
  case "$(uname -m)" in
    x86_64) arch=amd64 ;; aarch64) arch=arm64 ;; *) die "--arch: unknown machine $(uname -m)" ;;
  esac
fi

# ---- provenance ------------------------------------------------------------------------------
# A checkout git cannot read (e.g. "dubious ownership") must fail the build: falling back to epoch 0
# and revision "unknown" there would silently give another image ID than its owner gets.
if [ -n "$source_dir" ] && [ -e "$source_dir/.git" ]; then
  git_error=$(git -C "$source_dir" rev-parse --git-dir 2>&1 >/dev/null) ||
    die "git -C $source_dir rev-parse: cannot read the checkout: $git_error"
fi
# No checkout, or one without commits yet: epoch 0 and revision "unknown".
in_git() { [ -n "$source_dir" ] && git -C "$source_dir" rev-parse --verify -q HEAD >/dev/null 2>&1; }
if [ -n "${SOURCE_DATE_EPOCH:-}" ]; then
  epoch=$SOURCE_DATE_EPOCH
elif in_git; then
  epoch=$(git -C "$source_dir" log -1 --format=%ct HEAD)
else
  epoch=0
fi
[[ "$epoch" =~ ^[0-9]+$ ]] || die "SOURCE_DATE_EPOCH '$epoch': expected seconds since 1970"
revision=unknown
if in_git; then revision=$(git -C "$source_dir" rev-parse --verify HEAD); fi
created=$(date -u -d "@$epoch" +%Y-%m-%dT%H:%M:%SZ)
for l in "${labels[@]}"; do
  case "$l" in
    org.opencontainers.image.created=*|org.opencontainers.image.revision=*)
      die "--label '$l': created and revision come from --source-dir / SOURCE_DATE_EPOCH" ;;
  esac
done
labels+=("org.opencontainers.image.created=$created" "org.opencontainers.image.revision=$revision")

# ---- checks on the entries -------------------------------------------------------------------
mapfile -t paths < <(printf '%s\n' "${!kind[@]}" | sort)
for p in "${paths[@]}"; do
  parent=${p%/*}
  if [ -n "$parent" ] && [ "${kind[$parent]:-}" != dir ]; then
    die "entry '$p': its parent '$parent' is not declared with --dir"
  fi
  if [ "${kind[$p]}" = file ]; then
    src=${source[$p]}
    if [ ! -f "$src" ] || [ ! -r "$src" ]; then
      die "--file $p: source '$src' is not a readable regular file"
    fi
    # A FROM-scratch image has no dynamic loader and no libc unless it declares them: an ELF file
    # that names a program interpreter is refused unless that interpreter is an entry of the image.
    if [ "$(head -c 4 "$src" | od -An -tx1 | tr -d ' \n')" = 7f454c46 ]; then
      command -v readelf >/dev/null || die "readelf (binutils) is needed to check $src is static"
      # Captured first: `readelf | grep -q` under pipefail would turn grep's early exit into "no".
      headers=$(readelf -lW "$src") || die "readelf -lW $src: failed"
      interp=$(sed -n 's/.*Requesting program interpreter: \([^]]*\)\].*/\1/p' <<< "$headers")
      if [ -n "$interp" ] && [ -z "${kind[$interp]:-}" ]; then
        die "--file $p: '$src' is dynamically linked; the image has no loader or libc"
      fi
    fi
  fi
done

# ---- the layer -------------------------------------------------------------------------------
mkdir -p "$out"
stage=$(mktemp -d "$out/.stage-$name.XXXXXX")
trap 'rm -rf "$stage"' EXIT
rootfs=$stage/rootfs layer=$stage/layer.tar
mkdir "$rootfs"

listing=$stage/listing
: > "$listing"
content_bytes=0
tar_mode=--create
for p in "${paths[@]}"; do
  rel=${p#/}
  case "${kind[$p]}" in
    dir) mkdir -p "$rootfs/$rel" ;;
    file) cp -L "${source[$p]}" "$rootfs/$rel"
      content_bytes=$((content_bytes + $(stat -c %s "$rootfs/$rel"))) ;;
    symlink) ln -s "${target[$p]}" "$rootfs/$rel" ;;
  esac
  # One entry per call so each gets its own owner and mode; the loop order is the archive order.
  # Owners as NAME:ID: GNU tar 1.34 silently ignores the "+ID" form and records the staging
  # file's real owner; with --numeric-owner the placeholder names are not stored.
  tar "$tar_mode" --file="$layer" --format=ustar --no-recursion --numeric-owner \
      --owner="u:${owner[$p]%%:*}" --group="g:${owner[$p]##*:}" --mode="${mode[$p]}" \
      --mtime="@$epoch" -C "$rootfs" -- "$rel"
  tar_mode=--append
  line="${kind[$p]} ${mode[$p]} ${owner[$p]} $p"
  [ "${kind[$p]}" != symlink ] || line+=" -> ${target[$p]}"
  printf '%s\n' "$line" >> "$listing"
done
diff_id=$(sha256sum "$layer" | cut -d' ' -f1)

if [ -n "$expect_manifest" ]; then
  [ -r "$expect_manifest" ] || die "--expect-manifest $expect_manifest: cannot read"
  if ! diff -u <(grep -vE '^[[:space:]]*(#|$)' "$expect_manifest") "$listing" >&2; then
    die "image $name does not hold exactly $expect_manifest (diff above: - expected, + built)"
  fi
fi

# ---- the config ------------------------------------------------------------------------------
json_string() {
  local s=$1
  [[ "$s" != *[[:cntrl:]]* ]] || die "control character in '$s'"
  s=${s//\\/\\\\}; s=${s//\"/\\\"}
  printf '"%s"' "$s"
}
json_array() {
  local sep='' v
  printf '['
  for v in "$@"; do printf '%s' "$sep"; json_string "$v"; sep=,; done
  printf ']'
}
label_object() {
  local sep='' l
  printf '{'
  while IFS= read -r l; do
    printf '%s' "$sep"; json_string "${l%%=*}"; printf ':'; json_string "${l#*=}"; sep=,
  done < <(printf '%s\n' "${labels[@]}" | sort -t= -k1,1 -u)
  printf '}'
}
dup=$(printf '%s\n' "${labels[@]}" | cut -d= -f1 | sort | uniq -d)
[ -z "$dup" ] || die "label '$dup' given twice"

# Keys in sorted order, no whitespace: the bytes are the image ID, so they must not depend on us.
config=$stage/config.json
{
  printf '{"architecture":"%s","config":{' "$arch"
  [ ${#cmd[@]} -eq 0 ] || { printf '"Cmd":'; json_array "${cmd[@]}"; printf ','; }
  [ ${#entrypoint[@]} -eq 0 ] || { printf '"Entrypoint":'; json_array "${entrypoint[@]}"; printf ','; }
  [ ${#envs[@]} -eq 0 ] || { printf '"Env":'; json_array "${envs[@]}"; printf ','; }
  printf '"Labels":'; label_object
  [ -z "$user" ] || { printf ',"User":'; json_string "$user"; }
  [ -z "$workdir" ] || { printf ',"WorkingDir":'; json_string "$workdir"; }
  printf '},"created":"%s","history":[{"created":"%s","created_by":"image/build-image.sh"}],' \
    "$created" "$created"
  printf '"os":"linux","rootfs":{"diff_ids":["sha256:%s"],"type":"layers"}}' "$diff_id"
} > "$config"
config_hex=$(sha256sum "$config" | cut -d' ' -f1)
image_id=sha256:$config_hex

# ---- the archive -----------------------------------------------------------------------------
archive_dir=$stage/archive
mkdir -p "$archive_dir/$diff_id"
cp "$layer" "$archive_dir/$diff_id/layer.tar"
cp "$config" "$archive_dir/$config_hex.json"
{
  printf '[{"Config":"%s.json","RepoTags":' "$config_hex"
  if [ ${#tags[@]} -eq 0 ]; then printf 'null'; else json_array "${tags[@]}"; fi
  printf ',"Layers":["%s/layer.tar"]}]' "$diff_id"
} > "$archive_dir/manifest.json"
chmod 0755 "$archive_dir/$diff_id"
chmod 0644 "$archive_dir/$diff_id/layer.tar" "$archive_dir/$config_hex.json" "$archive_dir/manifest.json"
tar --create --file="$stage/image.tar" --format=ustar --sort=name --numeric-owner --owner=u:0 \
    --group=g:0 --mtime="@$epoch" -C "$archive_dir" -- "$config_hex.json" "$diff_id" manifest.json

# Outputs appear complete or not at all.
mv -f "$stage/image.tar" "$out/$name.tar"
mv -f "$listing" "$out/$name.manifest"
printf '%s\n' "$image_id" > "$stage/id" && mv -f "$stage/id" "$out/$name.id"

# ---- load and check --------------------------------------------------------------------------
engine_size=''
if [ $load -eq 1 ]; then
  command -v docker >/dev/null || die "docker: not found (use --no-load to write the archive only)"
  docker load --quiet --input "$out/$name.tar" >/dev/null ||
    die "docker load --input $out/$name.tar: failed (is the engine running? see 'docker info')"
  got=$(docker image inspect --format '{{.Id}}' "$image_id" 2>/dev/null) || got=''
  [ "$got" = "$image_id" ] || die "docker load $out/$name.tar: engine holds '$got', expected $image_id"
  for t in "${tags[@]}"; do
    got=$(docker image inspect --format '{{.Id}}' "$t" 2>/dev/null) || got=''
    [ "$got" = "$image_id" ] || die "docker load: tag $t names '$got', expected $image_id"
  done
  engine_size=$(docker image inspect --format '{{.Size}}' "$image_id")
fi
if [ -n "$id_file" ]; then
  mkdir -p "$(dirname "$id_file")"
  printf '%s\n' "$image_id" > "$id_file.tmp.$$" && mv -f "$id_file.tmp.$$" "$id_file"
fi

printf '%s: %s %s\n' "$self" "$name" "$image_id"
printf '%s:   tags %s; created %s; revision %s\n' "$self" "${tags[*]:-none}" "$created" "$revision"
printf '%s:   %d entries, %d bytes of file content, layer tar %d bytes, archive %s\n' "$self" \
  "${#paths[@]}" "$content_bytes" "$(stat -c %s "$layer")" "$out/$name.tar"
[ -z "$engine_size" ] || printf '%s:   loaded; docker reports size %s bytes\n' "$self" "$engine_size"
