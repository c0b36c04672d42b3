#!/usr/bin/env bash
# Rank 0 SIGKILLed mid-sweep (the OOM killer, kill -9): nothing publishes the results file, whose
# finished rows stay in OUT.partial, and mpirun's own line names only the signal. The next step
# must say where they are: `commscope-report bench OUT` fails in one line naming OUT.partial
# (before: "OUT: no such file"), the report of OUT.partial given by name reads its rows and marks
# it incomplete, and the readback finds the rows flushed before the kill.
#   killed_rank0.sh READBACK REPORT OUT.h5 -- launcher-and-bench-command...
set -u
# shellcheck source=wait_for_lines.sh
. "$(dirname "$0")/wait_for_lines.sh"
readback=$1 report=$2 out=$3
shift 3
[ "$1" = "--" ] && shift
rm -f "$out" "$out.partial"
log=$(mktemp)
"$@" --out "$out" >"$log" 2>&1 &
pid=$!
wait_for_lines "$log" '^ *[0-9]' 3 $pid
rank0=
for child in $(pgrep -P $pid); do
  tr '\0' '\n' <"/proc/$child/environ" 2>/dev/null | grep -qx 'OMPI_COMM_WORLD_RANK=0' && rank0=$child
done
fail() { cat "$log"; rm -f "$log"; echo "killed_rank0.sh: FAIL: $*"; exit 1; }
[ -n "$rank0" ] || fail "no rank 0 under the launcher"
kill -KILL "$rank0"
wait $pid
rc=$?
cat "$log"
echo "killed_rank0.sh: exit status $rc after SIGKILL to rank 0"
[ "$rc" -ne 0 ] || fail "a run whose rank 0 was killed must not exit 0"
[ -e "$out" ] && fail "$out exists: nobody could have published it"
[ -e "$out.partial" ] || fail "no $out.partial"
said=$("$report" bench "$out" -o "$out.report" 2>&1)
rc=$?
echo "$said"
[ "$rc" = 2 ] || fail "the report of $out: exit status $rc, expected 2"
[ "$(echo "$said" | wc -l)" = 1 ] || fail "more than one line"
echo "$said" | grep -qF "$out: no such file: it was not completed" || fail "the report does not say $out was not completed"
echo "$said" | grep -qF "what it wrote is in $out.partial" || fail "the report does not name $out.partial"
"$report" bench "$out.partial" -o "$out.report" >"$log.report" 2>&1 || { cat "$log.report"; fail "the report cannot read $out.partial"; }
grep -q "^WARNING: $out.partial: an incomplete file, never published" "$log.report" ||
  { cat "$log.report"; fail "the report of $out.partial does not mark it incomplete"; }
rm -f "$log" "$log.report"
"$readback" "$out.partial" 3 --status running || exit 1
echo "killed_rank0.sh: the rows are in $out.partial, and the report says so"
