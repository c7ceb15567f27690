#!/usr/bin/env bash
# A bounded fuzzing campaign over every fuzz target of the repository
# (`func FuzzXxx` in a _test.go file; a new target is picked up without
# editing this script). The budget (LUBAN_FUZZ_BUDGET seconds, default 24)
# is shared out between the targets, between 2 and 8 seconds each. A target
# that fails leaves its input under <package>/testdata/fuzz/<FuzzXxx>/:
# commit it as a seed once the bug is fixed. Run by scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

budget="${LUBAN_FUZZ_BUDGET:-24}"
targets=()
while IFS= read -r file; do
  dir="$(dirname "$file")"
  while IFS= read -r name; do
    targets+=("$dir $name")
  done < <(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' "$file")
done < <(grep -rl --include='*_test.go' --exclude-dir=node_modules --exclude-dir=.git '^func Fuzz' . | sort)

n=${#targets[@]}
if [ "$n" -eq 0 ]; then
  echo "no fuzz targets found" >&2
  exit 1
fi
per=$(( budget / n ))
[ "$per" -lt 2 ] && per=2
[ "$per" -gt 8 ] && per=8
echo "fuzzing $n targets, ${per}s each"
start=$SECONDS
for t in "${targets[@]}"; do
  read -r dir name <<<"$t"
  echo "-- $dir $name"
  go test -run '^$' -fuzz "^${name}\$" -fuzztime "${per}s" "$dir"
done
echo "fuzzing done in $(( SECONDS - start ))s"
