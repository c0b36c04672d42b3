#!/usr/bin/env bash
# arrival_skew.sh FILE -- launcher-and-bench-command... (a 2-rank sweep of one size, 5 calls, rank
# 1 entering the first sampled call 20 ms late; without --out): the samples in FILE measure the
# arrival skew on a common clock: call 0 of each case (out of and in place) 15 ms or more, the
# calls after it, which both ranks enter together, less than 5 ms; 10 samples in all.
set -u
file=$1
shift
[ "$1" = "--" ] && shift
rm -f "$file"
"$@" --out "$file" > /dev/null || { echo "arrival_skew.sh: FAIL: the bench exited with status $?"; exit 1; }
# /samples rows: result, iteration, time_us, skew_us.
h5dump -d /samples -y -w 1000 "$file" | tr -d ' {},' | grep -E '^[0-9.e+-]+$' | paste - - - - |
  awk '{ print; n++; if ($2 == 0 ? $4 < 15000 : $4 >= 5000) bad = 1 }
       END { if (n != 10 || bad) print "arrival_skew.sh: FAIL: " n " samples (10 wanted), skews above wrong"; exit n != 10 || bad }'
