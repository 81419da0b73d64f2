#!/bin/sh
# Re-imports the H200 campaign from its raw output (results/h200/raw) and
# writes the report; run from the project root. BACKENDS names the binary.
set -eu
B=${BACKENDS:-backends}
R=results/h200
S=suites/oopsla21/oopsla21.ron
rm -rf $R/*_instruction $R/*.device.json $R/*.journal.jsonl results/simt/h200.simt.csv
lines() { for f in "$@"; do [ -s "$f" ] && printf -- '--lines %s ' "$f"; done; }
$B import --target cuda $S $(lines $R/raw/call1/pub/r1-*.jsonl $R/raw/call1/pub/r2-*.jsonl $R/raw/call2/pub/r1-*.jsonl $R/raw/call2/pub/r2-*.jsonl) --info $R/raw/call1/info.json --out $R --name h200
$B import --target cuda $S $(lines $R/raw/call1/iw/r1-*.jsonl) --info $R/raw/call1/info.json --out $R --name h200-intra-warp
$B import --target cuda $S $(lines $R/raw/call1/coop/r1-*.jsonl) --info $R/raw/call1/info.json --out $R --name h200-cooperative
# The second session's runs of the four round-robin tests of finding 3, with a 2 s deadline (raw/call3).
$B import --target cuda $S --lines $R/raw/call3/rr-2s.jsonl --info $R/raw/call3/info.json --out $R --name h200-2s
$B import --target cuda $S --lines $R/raw/call3/iw-2s.jsonl --info $R/raw/call3/info.json --out $R --name h200-intra-warp-2s
$B import --simt --target cuda --name h200 suites/simt $(lines $R/raw/call1/simt/*.jsonl) -o results/simt
$B report $R --svg $R/nonterminating.svg > $R/REPORT.txt
