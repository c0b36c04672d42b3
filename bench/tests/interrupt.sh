#!/usr/bin/env bash
# Ctrl-C in the middle of a run: the results file must be published under its final name,
# valid, holding every line finished before the interrupt, and rank 0 must say where ("kept N
# rows in FILE"); the -J file (OUT.h5.json) must be
# valid JSON with those lines (checked where python3 is).
#   interrupt.sh READBACK OUT.h5 -- launcher-and-bench-command...
set -u
# shellcheck source=wait_for_lines.sh
. "$(dirname "$0")/wait_for_lines.sh"
readback=$1 out=$2
shift 2
[ "$1" = "--" ] && shift
rm -f "$out" "$out.partial" "$out.json"*
log=$(mktemp)
"$@" --out "$out" -J "$out.json" >"$log" 2>&1 &
pid=$!
wait_for_lines "$log" '^ *[0-9]' 3 $pid
kill -INT $pid
wait $pid
rc=$?
cat "$log"
kept=$(grep -Ec "^commscope-bench: rank 0: kept [0-9]+ rows in $out\$" "$log")
rm -f "$log"
echo "interrupt.sh: exit status $rc after SIGINT"
[ "$kept" = 1 ] || { echo "interrupt.sh: FAIL: no 'kept N rows in $out' line from rank 0"; exit 1; }
[ "$rc" -ne 0 ] || { echo "interrupt.sh: FAIL: an interrupted run must not exit 0"; exit 1; }
[ -e "$out.partial" ] && { echo "interrupt.sh: FAIL: $out.partial was left behind"; exit 1; }
"$readback" "$out" 3 --status running || exit 1  # cut short, and the file says so
command -v python3 >/dev/null || exit 0
python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); assert len(d["results"]) >= 3 and d["errors"], d
print("interrupt.sh: %d lines in the JSON file" % len(d["results"]))' "$out.json"
