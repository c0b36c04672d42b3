#!/usr/bin/env bash
# chakra_cli.sh FIXTURE_EXE EXPORT_EXE IMPORT_EXE COMPARE_EXE WORKDIR [REAL_TRACE]
#
# commscope-export chakra and commscope-import chakra end to end: the synthetic profile
# (test_profile_fixture, single and per-rank layout) exported to PREFIX.N.et and imported again
# holds the same communication per rank (test_chakra_compare); bad input (not a Chakra file, a
# truncated one, a missing prefix, a profile that is no profile, a prefix in no folder) gives
# exit status 2, one line, and no output file. REAL_TRACE, when given and present (Chakra's own
# tests/data/chakra.0.et), must import.
set -euo pipefail

if [ $# -lt 5 ]; then
  echo "usage: chakra_cli.sh FIXTURE_EXE EXPORT_EXE IMPORT_EXE COMPARE_EXE WORKDIR [REAL_TRACE]" >&2
  exit 2
fi
fixture=$1 export=$2 import=$3 compare=$4 work=$5 real=${6:-}
rm -rf "$work"
mkdir -p "$work"
fail() {
  echo "chakra_cli.sh: FAILED: $*" >&2
  exit 1
}

# --- round trips
for layout in single per-rank; do
  flag=()
  [ "$layout" = per-rank ] && flag=(--per-rank)
  "$fixture" "$work/$layout.h5" "${flag[@]}" >/dev/null
  "$export" chakra "$work/$layout.h5" -o "$work/$layout" || fail "export of the $layout profile"
  for r in 0 1; do [ -s "$work/$layout.$r.et" ] || fail "no $work/$layout.$r.et"; done
  [ ! -e "$work/$layout.2.et" ] || fail "a third rank's file for a 2-rank profile"
  "$import" chakra "$work/$layout" -o "$work/$layout-back.h5" || fail "import of the $layout traces"
  "$compare" "$work/$layout.h5" "$work/$layout-back.h5" || fail "the $layout round trip changed the communication"
done
# The files named one by one are the same ranks as the prefix.
"$import" chakra "$work/single.0.et" "$work/single.1.et" -o "$work/files-back.h5" >/dev/null
"$compare" "$work/single.h5" "$work/files-back.h5" >/dev/null || fail "files named one by one"

# Gzip-compressed traces (Chakra's protolib reads them) are the same traces.
for r in 0 1; do gzip -c "$work/single.$r.et" >"$work/gz.$r.et"; done
"$import" chakra "$work/gz" -o "$work/gz-back.h5" >/dev/null
"$compare" "$work/single.h5" "$work/gz-back.h5" >/dev/null || fail "gzip-compressed traces"

# --- bad input: exit 2, one line, nothing written
one_line() {  # EXPECTED_REGEX OUTPUT_FILE -- command...
  local regex=$1 output=$2
  shift 3
  local out rc=0
  out=$("$@" 2>&1) || rc=$?
  echo "$out"
  [ "$rc" -eq 2 ] || fail "exit status $rc, wanted 2: $*"
  [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] || fail "more than one line: $*"
  printf '%s\n' "$out" | grep -Eq -- "$regex" || fail "no match for /$regex/: $out"
  if [ -n "$output" ] && { [ -e "$output" ] || [ -e "$output.partial" ]; }; then fail "$output written: $*"; fi
}
printf 'this is not a Chakra trace\n' >"$work/text.0.et"
one_line '^commscope-import: .*text.0.et: not a Chakra execution trace' "$work/out.h5" -- \
  "$import" chakra "$work/text" -o "$work/out.h5"
head -c 100 "$work/single.0.et" >"$work/cut.0.et"
one_line '^commscope-import: .*cut.0.et: .*truncated' "$work/out.h5" -- "$import" chakra "$work/cut" -o "$work/out.h5"
: >"$work/empty.0.et"
one_line '^commscope-import: .*empty file' "$work/out.h5" -- "$import" chakra "$work/empty" -o "$work/out.h5"
head -c 60 "$work/gz.0.et" >"$work/gzcut.0.et"
one_line '^commscope-import: .*gzcut.0.et: gzip-compressed, damaged or truncated' "$work/out.h5" -- \
  "$import" chakra "$work/gzcut" -o "$work/out.h5"
one_line '^commscope-import: .*no-such: no such file' "$work/out.h5" -- \
  "$import" chakra "$work/no-such" -o "$work/out.h5"
one_line '^commscope-export: .*text.0.et' "$work/x.0.et" -- "$export" chakra "$work/text.0.et" -o "$work/x"
one_line "^commscope-export: cannot write -o '.*': not a prefix in an existing folder" "" -- \
  "$export" chakra "$work/single.h5" -o "$work/no-such-dir/x"
one_line '^commscope-export: .*see --help' "" -- "$export" chakra "$work/single.h5"

# --- a real trace
if [ -n "$real" ] && [ -f "$real" ]; then
  out=$("$import" chakra "$real" -o "$work/real.h5") || fail "import of $real"
  echo "$out"
  grep -q 'imported: COMM_COLL_NODE [1-9]' <<<"$out" || fail "no collectives imported from $real"
  grep -q 'times synthetic' <<<"$out" || fail "$real has no start times: they should be synthetic"
else
  echo "chakra_cli.sh: no real Chakra trace given (COMMSCOPE_CHAKRA_TRACE), that part skipped"
fi
echo "chakra_cli.sh: passed"
