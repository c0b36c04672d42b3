#!/usr/bin/env bash
# nccl-tests' JSON layout: run the bench with -J FILE while FILE already exists (nccl-tests then
# writes FILE.0 and leaves FILE alone), and read FILE.0 with python's json, checking the keys
# and nesting nccl-tests' writer (src/util.cu, file version 3) produces.
#   json_results.sh FILE -- launcher-and-bench-command... (without -J)
# Exit 77 (skipped) without python3.
set -u
file=$1
shift
[ "$1" = "--" ] && shift
python=$(command -v python3 || command -v /usr/bin/python3) || { echo "json_results.sh: no python3: skipped"; exit 77; }
rm -f "$file" "$file".*
: >"$file"
"$@" -J "$file" || { echo "json_results.sh: FAIL: the bench exited $?"; exit 1; }
[ -s "$file" ] && { echo "json_results.sh: FAIL: $file was overwritten"; exit 1; }
"$python" - "$file.0" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
def need(obj, keys, where):
    missing = [k for k in keys if k not in obj]
    if missing:
        sys.exit(f"json_results.sh: FAIL: {where} lacks {missing}")
need(d, ["version", "start_time", "args", "env", "nccl_version", "config", "results", "out_of_bounds",
         "average_bus_bandwidth", "errors", "end_time"], "the file")
assert d["version"] == 3 and isinstance(d["args"], list) and isinstance(d["env"], list)
need(d["config"], ["nthreads", "ngpus", "minimum_bytes", "maximum_bytes", "warmup_iters", "iterations",
                   "aggregated_iterations", "validation", "graph", "blocking_collectives", "per_iter_timing",
                   "per_iter_skip", "parallel_init", "devices"], "config")
assert "step_factor" in d["config"] or "step_bytes" in d["config"]
for dev in d["config"]["devices"]:
    need(dev, ["rank", "group", "pid", "hostname", "device", "device_hex", "device_info"], "a device")
assert len(d["results"]) > 0, "no results"
for r in d["results"]:
    need(r, ["size", "count", "type", "redop", "root", "out_of_place", "in_place", "actual_iterations",
             "experiment_name"], "a result")
    assert r["type"] == "float" and isinstance(r["root"], str), r
    for side in ("out_of_place", "in_place"):
        need(r[side], ["time", "alg_bw", "bus_bw", "nwrong"], side)
        assert r[side]["nwrong"] == 0, r
        if d["config"]["per_iter_timing"] == "true":
            p = r[side + "_per_iter"]
            need(p, ["skipped_iterations", "min_us", "max_us", "avg_us", "p50_us", "p95_us", "p99_us", "stdev_us",
                     "cv_pct", "times_us"], side + "_per_iter")
            assert len(p["times_us"]) == r["actual_iterations"], p
need(d["out_of_bounds"], ["count", "okay"], "out_of_bounds")
assert d["out_of_bounds"]["okay"] == "true"
need(d["average_bus_bandwidth"], ["bandwidth", "okay"], "average_bus_bandwidth")
print(f"json_results.sh: {sys.argv[1]}: {len(d['results'])} results in nccl-tests' layout")
PY
