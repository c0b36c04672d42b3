#!/usr/bin/env bash
# Checks what commscope-report doctor names in a doctor file:
#   doctor-findings.sh REPORT FILE.h5 [--about NAME] WANT...
# WANT: the start of every finding headline that must be there, each matching exactly one
# headline ("slow host links: host3", "slow node: host4"), or "none" for no finding at all. Every
# headline must be wanted (nothing else is named) or, with --about, name NAME (a throttled host's
# links may be slow too); every link listed under a host's headline must be one of its links.
set -uo pipefail
report=$1 file=$2 about=""
shift 2
if [ "${1:-}" = --about ]; then about=$2; shift 2; fi
out=$("$report" doctor "$file" 2>&1) || { printf '%s\n' "$out"; echo "doctor-findings.sh: FAIL: the report failed"; exit 1; }
findings=$(printf '%s\n' "$out" | sed -n '/^Findings$/,$p' | sed '1,/^Rule: /d' | grep -v '^$' | grep -v '^wrote ')
printf '%s\n' "$findings"
fail=0
if [ "$*" = none ]; then
  [ "$findings" = "no outlier: every link, node and rank judged is within the rule." ] ||
    { echo "doctor-findings.sh: FAIL: wanted no finding"; fail=1; }
  exit $fail
fi
headlines=$(printf '%s\n' "$findings" | grep -v '^  ')
for want in "$@"; do
  n=$(printf '%s\n' "$headlines" | grep -cF -- "$want")
  [ "$n" = 1 ] || { echo "doctor-findings.sh: FAIL: '$want' named $n times, wanted once"; fail=1; }
done
while IFS= read -r line; do
  ok=0
  for want in "$@"; do case $line in "$want"*) ok=1 ;; esac; done
  if [ -n "$about" ]; then case $line in *" $about:"*|*" $about "*) ok=1 ;; esac; fi
  [ $ok = 1 ] || { echo "doctor-findings.sh: FAIL: not wanted: $line"; fail=1; }
done <<<"$headlines"
# Under "slow host links: H:", every "  link A <-> B" line names H.
printf '%s\n' "$findings" | awk '
  /^[^ ]/ { host = ""; if (match($0, /host links: [^:]+:/)) { host = substr($0, RSTART + 12, RLENGTH - 13) } }
  /^  link / && host != "" { if (index($0, " " host " ") == 0) { print "doctor-findings.sh: FAIL: not a link of " host ": " $0; bad = 1 } }
  END { exit bad }' || fail=1
[ $fail = 0 ] && echo "doctor-findings.sh: OK: named $(printf '%s\n' "$headlines" | wc -l) finding(s), as wanted"
exit $fail
