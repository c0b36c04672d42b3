#!/usr/bin/env bash
# trace_has_events.sh REPORT PROFILE JSON: `REPORT trace PROFILE -o JSON` writes JSON that parses
# and holds complete events (ph "X").
set -u
"$1" trace "$2" -o "$3" || { echo "trace_has_events.sh: FAIL: the report exited with status $?"; exit 1; }
python3 -c '
import json, sys
t = json.load(open(sys.argv[1]))
sys.exit(0 if any(e.get("ph") == "X" for e in t["traceEvents"]) else "trace_has_events.sh: FAIL: no complete event")
' "$3"
