#!/usr/bin/env bash
# Runs each fuzz target for SECONDS (default 60), seeded with the published
# tests and the committed suites. Needs cargo-fuzz (`cargo install
# cargo-fuzz`); works on stable Rust without a sanitizer (-s none): the
# parsers are safe Rust, so what is looked for is a panic, a hang (-timeout)
# or runaway memory (-rss_limit_mb). A crash is saved under
# fuzz/artifacts/TARGET/ and must become a case in tests/parsers.rs.
set -euo pipefail
secs="${1:-60}"
cd "$(dirname "$0")/.."
mkdir -p fuzz/corpus/text fuzz/corpus/ron
cp -n data/oopsla21/tests/*.txt fuzz/corpus/text/
cp -n suites/2t2i/2t2i.ron suites/3t3i/3t3i.ron fuzz/corpus/ron/
for target in text ron; do
    cargo fuzz run -s none "$target" "fuzz/corpus/$target" -- \
        -dict="fuzz/$target.dict" -max_total_time="$secs" -max_len=16384 \
        -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
done
