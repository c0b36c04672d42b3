#!/usr/bin/env bash
# wrote_counts.sh OUT REPORT BENCH_FILE: the bench report's last line counts the CSV files and
# plots it wrote into OUT as there are.
set -u
out=$1 report=$2 file=$3
rm -rf "$out"
said=$("$report" bench "$file" -o "$out") || { echo "wrote_counts.sh: FAIL: the report exited with status $?"; exit 1; }
csv=$(ls "$out"/*.csv | wc -l)
svg=$(ls "$out"/*.svg | wc -l)
printf '%s\n' "$said" | tail -n 1
printf '%s\n' "$said" | grep -q "with $csv CSV files and $svg plots (each an SVG and a PNG)$" ||
  { echo "wrote_counts.sh: FAIL: the last line does not count $csv CSV files and $svg plots"; exit 1; }
