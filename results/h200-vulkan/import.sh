#!/bin/sh
# Re-imports the second H200 session's runs from raw/ and writes the
# reports; run from the project root. BACKENDS names the binary.
#   results/h200-vulkan: the published suite through the Vulkan host (vkrun)
#     and through wgpu (plain only);
#   results/h200-complete: the weak-fair conformance tests of the five
#     complete configurations with CUDA (normal launch: plain x 3;
#     cooperative launch: chunked x 1).
# The runs of the four round-robin tests with a 2 s deadline are imported
# by results/h200/import.sh.
set -eu
B=${BACKENDS:-backends}
R=results/h200-vulkan
C=results/h200-complete
S=suites/oopsla21/oopsla21.ron
rm -rf $R/*_instruction $R/*.device.json $R/*.journal.jsonl $C/*_instruction $C/*.device.json $C/*.journal.jsonl
lines() { for f in "$@"; do [ -s "$f" ] && printf -- '--lines %s ' "$f"; done; }
$B import --target vulkan $S $(lines $R/raw/call2/vk/plain-*.jsonl $R/raw/call2/vk/round-robin-*.jsonl $R/raw/call3/chunked-*.jsonl) \
    --info $R/raw/call2/vk/info.json --out $R --name h200-vulkan
$B import --target wgpu $S $(lines $R/raw/call1/wgpu/plain-*.jsonl) --info $R/raw/call1/wgpu/info.json --out $R --name h200-wgpu
$B report $R --svg $R/nonterminating.svg > $R/REPORT.txt
mkdir -p $C
SC="suites/2t2i/2t2i.ron suites/2t3i/2t3i.ron suites/2t4i/2t4i.ron suites/3t3i/3t3i.ron suites/3t4i/3t4i.ron"
$B import --target cuda $SC $(lines $R/raw/call1/wf/*.jsonl) --info $R/raw/call1/settle/info.json --out $C --name h200
$B import --target cuda $SC $(lines $R/raw/call1/coop/*.jsonl) --info $R/raw/call1/settle/info.json --out $C --name h200-cooperative
# The device files record the suite: no --tests needed.
$B report $C --svg $C/nonterminating.svg > $C/REPORT.txt
