#!/usr/bin/env bash
# trace_json.sh FIXTURE_EXE TRACE_EXE WORKDIR [--per-rank]
#
# Writes the synthetic profile (test_profile_fixture), converts it with commscope-trace, and
# parses the JSON with python3: one "ph":"X" slice per event of the file, each with
# pid/tid/ts/dur, one process_name per rank, every slice's track named. Then the CLI's errors:
# a missing file, a non-HDF5 file, bad arguments and an unwritable output each give exit
# status 2 and exactly one line on stderr.
set -euo pipefail

if [ $# -lt 3 ]; then
  echo "usage: trace_json.sh FIXTURE_EXE TRACE_EXE WORKDIR [--per-rank]" >&2
  exit 2
fi
fixture=$1
trace=$2
work=$3
shift 3

rm -rf "$work"
mkdir -p "$work"
fail() {
  echo "trace_json.sh: FAILED: $*" >&2
  exit 1
}

# --- the fixture, converted
events=$("$fixture" "$work/profile.h5" "$@")
[[ "$events" =~ ^[0-9]+$ ]] || fail "the fixture printed '$events', not an event count"
echo "fixture: $events events $*"
if [ "${1:-}" = "--per-rank" ]; then
  [ -f "$work/profile.rank00000.h5" ] && [ -f "$work/profile.rank00001.h5" ] || fail "no rank files"
fi

"$trace" "$work/profile.h5" -o "$work/trace.json" 2> "$work/stderr.txt" || fail "commscope-trace exited $?"
cat "$work/stderr.txt"
[ "$(wc -l < "$work/stderr.txt")" -eq 1 ] || fail "expected one line on stderr"
grep -qx "commscope-trace: wrote $events slices (2 ranks) to $work/trace.json" "$work/stderr.txt" ||
  fail "unexpected report line"
[ ! -e "$work/trace.json.partial" ] || fail "trace.json.partial left behind"

check_json() {
  python3 - "$1" "$events" <<'EOF'
import json, sys
path, expected = sys.argv[1], int(sys.argv[2])
with open(path, encoding="utf-8") as f:
    trace = json.load(f)
assert trace["displayTimeUnit"] == "ns", trace.get("displayTimeUnit")
assert trace["otherData"]["schema"] == "commscope.profile/1", trace["otherData"]
assert trace["otherData"]["nranks"] == 2, trace["otherData"]
events = trace["traceEvents"]
slices = [e for e in events if e.get("ph") == "X"]
assert len(slices) == expected, f"{len(slices)} slices, {expected} events in the file"
kinds = {"iteration", "operator", "kernel", "memcpy", "memset", "communication", "runtime", "sync"}
for e in slices:
    for key in ("pid", "tid", "ts", "dur", "name", "cat", "args"):
        assert key in e, f"slice without {key}: {e}"
    assert isinstance(e["pid"], int) and isinstance(e["tid"], int), e
    assert isinstance(e["ts"], (int, float)) and isinstance(e["dur"], (int, float)) and e["dur"] >= 0, e
    assert e["cat"] in kinds, e
    assert "iteration" in e["args"] and "id" in e["args"] and "parent" in e["args"], e
    if e["cat"] == "communication":
        assert {"bytes", "seq", "algorithm"} <= e["args"].keys(), e
assert {e["cat"] for e in slices} == kinds, {e["cat"] for e in slices}
meta = [e for e in events if e.get("ph") == "M"]
procs = {e["pid"]: e["args"]["name"] for e in meta if e["name"] == "process_name"}
assert procs == {0: "rank 0 (node-0)", 1: "rank 1 (node-1)"}, procs
assert len([e for e in meta if e["name"] == "process_name"]) == 2
threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in meta if e["name"] == "thread_name"}
for e in slices:
    assert (e["pid"], e["tid"]) in threads, f"slice on an unnamed track: {e}"
names = set(threads.values())
for want in ("iterations", "thread 0", "thread 1", "communication", "GPU 0 stream 7", "GPU 1 stream 13",
             "GPU 0 communication", "GPU 1 communication"):
    assert want in names, f"no track {want!r} in {sorted(names)}"
# Rank 1's clock offset (-2500 ns) is applied: its first iteration starts at 1700 - 2500 ns.
first = min((e for e in slices if e["pid"] == 1 and e["cat"] == "iteration"), key=lambda e: e["ts"])
assert abs(first["ts"] - (-0.8)) < 1e-9, first
assert any(e["name"] == 'HtoD "batch"' for e in slices)
print(f"json ok: {len(slices)} slices, {len(meta)} metadata events")
EOF
}
check_json "$work/trace.json"

# -o - writes the same trace to stdout.
"$trace" "$work/profile.h5" -o - > "$work/stdout.json" 2> "$work/stderr.txt" || fail "-o - exited $?"
grep -qx "commscope-trace: wrote $events slices (2 ranks) to stdout" "$work/stderr.txt" || fail "-o - report"
cmp -s "$work/trace.json" "$work/stdout.json" || fail "-o - wrote another trace"

# --help: usage on stdout, exit 0.
"$trace" --help > "$work/help.txt" 2>&1 || fail "--help exited $?"
grep -q -- "--output" "$work/help.txt" || fail "--help does not describe --output"

# --- errors: exit 2, one line "commscope-trace: ..." naming the problem
expect_error() {  # expect_error NEEDLE ARGS...
  local needle=$1 rc=0
  shift
  "$trace" "$@" > "$work/out.txt" 2> "$work/err.txt" || rc=$?
  [ "$rc" -eq 2 ] || fail "commscope-trace $* exited $rc, expected 2"
  [ "$(wc -l < "$work/err.txt")" -eq 1 ] || fail "commscope-trace $*: not one line: $(cat "$work/err.txt")"
  grep -q "^commscope-trace: .*$needle" "$work/err.txt" || fail "commscope-trace $*: $(cat "$work/err.txt")"
  echo "error ok: $(cat "$work/err.txt")"
}
expect_error "missing.h5: no such file" "$work/missing.h5" -o "$work/x.json"
printf 'this is not an HDF5 file\n' > "$work/garbage.h5"
expect_error "garbage.h5: not an HDF5 file" "$work/garbage.h5" -o "$work/x.json"
expect_error "" "$work/profile.h5"
expect_error "" 
expect_error "" "$work/profile.h5" -o "$work/x.json" --no-such-option
expect_error "nonexistent" "$work/profile.h5" -o "$work/nonexistent/dir/x.json"
[ ! -e "$work/x.json" ] || fail "x.json written despite errors"
if [ "${1:-}" = "--per-rank" ]; then
  rm "$work/profile.rank00001.h5"
  expect_error "profile.rank00001.h5: no such file" "$work/profile.h5" -o "$work/x.json"
fi
echo "trace_json.sh: all checks passed"
