#!/usr/bin/env bash
# Every script's --help is a usage text: exit 0, the script's own usage line, the whole opening
# comment without its '#' marks, and none of the script's code (compare-interconnects.sh printed
# its first lines of code; emulate-cluster.sh stopped mid-sentence; test.sh ran the build).
set -u
dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bad=0
for s in "$dir"/*.sh; do
  name=$(basename "$s")
  out=$(timeout 10 bash "$s" --help 2>&1)
  rc=$?
  header=$(awk 'NR > 1 && !/^#/ { exit } NR > 1 { n++ } END { print n }' "$s")
  problem=""
  [ "$rc" -eq 0 ] || problem="exit status $rc"
  printf '%s\n' "$out" | grep -q "scripts/$name" || problem="${problem:+$problem; }no usage line naming scripts/$name"
  printf '%s\n' "$out" | grep -qE '^#|^set -|^[a-z_]+=\$\(|Configuring done' && problem="${problem:+$problem; }code or build output in it"
  [ "$(printf '%s\n' "$out" | wc -l)" -eq "$header" ] || problem="${problem:+$problem; }not the whole $header-line opening comment"
  if [ -n "$problem" ]; then echo "help.sh: $name --help: $problem"; bad=1; else echo "help.sh: $name --help ok"; fi
done
# Options before the command are taken (--prefix x up 2 was 'unknown command --prefix'): a bad
# prefix before the command is judged as one after it, without touching the system.
out=$(bash "$dir/emulate-cluster.sh" --prefix 'bad name' status 2>&1)
rc=$?
if [ "$rc" -ne 2 ] || ! printf '%s\n' "$out" | grep -q -- "--prefix: letters, digits"; then
  echo "help.sh: emulate-cluster.sh --prefix before the command: exit $rc, '$out'"
  bad=1
fi
exit $bad
