#!/usr/bin/env bash
# Write the trainer's default corpus: the King James Bible (public domain) as plain text, one
# verse a line, without the verse references ("Ge1:1 "). Needs the `bible` program (Debian
# package bible-kjv, installed by scripts/setup.sh).
# Idempotent: does nothing when OUT already exists and is not empty.
#
#   scripts/get-corpus.sh [OUT]      (default: data/kjv.txt under the repository root)
set -euo pipefail

# --help: this file's opening comment, up to the first line of code, without the '# '.
usage() { awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "${BASH_SOURCE[0]}"; }

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
case "${1:-}" in
  -h|--help) usage; exit 0 ;;
esac
[ $# -le 1 ] || { echo "get-corpus.sh: at most one argument, the output file (see --help)" >&2; exit 2; }
out=${1:-$root/data/kjv.txt}

if [ -s "$out" ]; then
  echo "get-corpus.sh: $out already exists, keeping it"
  exit 0
fi
if ! command -v bible >/dev/null 2>&1; then
  echo "get-corpus.sh: the 'bible' program is missing; install bible-kjv (apt-get install bible-kjv, or scripts/setup.sh)" >&2
  exit 1
fi

mkdir -p "$(dirname "$out")"
partial="$out.partial"
trap 'rm -f "$partial"' EXIT
# Every line starts with a reference: an optional book number, the book's abbreviation, chapter:verse.
bible -f "Genesis 1:1-Revelation 22:21" | sed -E 's/^[1-3]?[A-Za-z]+[0-9]+:[0-9]+ //' >"$partial"
if [ ! -s "$partial" ]; then
  echo "get-corpus.sh: 'bible' wrote nothing; is bible-kjv-text installed?" >&2
  exit 1
fi
mv "$partial" "$out"
trap - EXIT
echo "get-corpus.sh: wrote $out ($(wc -l <"$out") verses, $(wc -c <"$out") bytes)"
