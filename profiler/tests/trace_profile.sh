#!/usr/bin/env bash
# trace_profile.sh TRACE_EXE PROFILE.h5 OUT.json
# Converts a real profile (the synthetic workload's) and checks with python3 that the JSON
# parses and holds one "X" slice per event of every /events/rankNNNNN table (counted by h5ls,
# independently of the reader the converter uses).
set -euo pipefail
trace=$1 profile=$2 out=$3
"$trace" "$profile" -o "$out"
events=$(h5ls "$profile/events" | python3 -c '
import re, sys
print(sum(int(m.group(1)) for m in re.finditer(r"Dataset \{(\d+)/", sys.stdin.read())))')
python3 - "$out" "$events" <<'PY'
import json, sys
trace = json.load(open(sys.argv[1]))
slices = [e for e in trace["traceEvents"] if e.get("ph") == "X"]
want = int(sys.argv[2])
ranks = {e["pid"] for e in slices}
print(f"{len(slices)} slices for {want} events, {len(ranks)} processes")
assert want > 0 and len(slices) == want, "slice count differs from the file's event count"
assert all(e["dur"] >= 0 for e in slices)
PY
