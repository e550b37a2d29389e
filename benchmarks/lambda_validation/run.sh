#!/usr/bin/env bash
# The two passes of the lambda-validation study (about 15 minutes of one core in all), then the pooled table.
set -euo pipefail
cd "$(dirname "$0")"
export OPENBLAS_NUM_THREADS=1 PYTHONHASHSEED=0
E=0.5,1,5,50
for a in "paper 2000 ATE 1000" "mixed 4000 ATE 1000" "mixed 4000 ATT 1000" "ihdp 747 ATE 1000" "ihdp 747 ATT 1000" \
         "mixed 20000 ATE 500" "mixed 20000 ATT 500"; do python study.py $a $E; done > results.jsonl
S=77000
for a in "paper 2000 ATE 1000" "mixed 4000 ATE 1000" "mixed 4000 ATT 1000" "mixed 20000 ATE 1000" "mixed 20000 ATT 1000" \
         "ihdp 747 ATE 1000" "ihdp 747 ATT 1000"; do python study.py $a $E $S; done > results2.jsonl
python pooled.py
