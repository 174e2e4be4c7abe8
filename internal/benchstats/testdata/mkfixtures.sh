#!/usr/bin/env bash
# Regenerates the benchmark fixtures from real runs of testdata/benchmod:
#   old.txt, new.txt     -count 10, two variants of the code, two packages
#   small-old/new.txt    -count 3 (too few samples: CI and U-test warnings)
#   six.txt              -count 6 of the new variant
# The runs are short (-benchtime 20ms) to keep the machine usable.
set -euo pipefail
cd "$(dirname "$0")/benchmod"
run() { go test -run '^$' -bench . -benchmem -benchtime 20ms "$@" ./...; }
FIXTURE_VARIANT=old run -count 10 > ../old.txt
FIXTURE_VARIANT=new run -count 10 > ../new.txt
FIXTURE_VARIANT=old run -count 3 > ../small-old.txt
FIXTURE_VARIANT=new run -count 3 > ../small-new.txt
FIXTURE_VARIANT=new run -count 6 > ../six.txt
