#!/usr/bin/env bash
# Fails when a tracked file (as staged in the index) is over 1 MiB and is not
# listed in scripts/large-files.allow. Run from anywhere inside the repository;
# the limit in bytes can be given as the first argument (the tests use it).
set -euo pipefail
limit="${1:-1048576}"
root="$(git rev-parse --show-toplevel)"
allow="$root/scripts/large-files.allow"
cd "$root"

declare -A allowed=()
if [ -f "$allow" ]; then
  while IFS= read -r line || [ -n "$line" ]; do
    line="${line%%#*}"
    line="${line#"${line%%[![:space:]]*}"}"
    line="${line%"${line##*[![:space:]]}"}"
    [ -n "$line" ] && allowed["$line"]=1
  done <"$allow"
fi

# Sizes of the blobs the index holds (what a commit would store), not of the
# work tree's files; submodule entries (mode 160000) have no blob here.
bad=0
while IFS=' ' read -r size path; do
  [ "$size" -gt "$limit" ] || continue
  [ -n "${allowed[$path]:-}" ] && continue
  printf '%s: %s bytes, over the %s-byte limit for tracked files\n' "$path" "$size" "$limit" >&2
  bad=1
done < <(git ls-files -s -z | tr '\0' '\n' | awk '$1 != "160000" { split($0, a, "\t"); split(a[1], f, " "); print f[2] " " a[2] }' \
          | git cat-file --batch-check='%(objectsize) %(rest)')

if [ "$bad" -ne 0 ]; then
  echo "Remove these files (and ignore them in .gitignore), or list them in scripts/large-files.allow if they are expected assets." >&2
  exit 1
fi
