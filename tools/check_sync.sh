#!/usr/bin/env bash
# Fail when notebooks and the exported modules disagree, or when a notebook is not clean.
# Needs a committed tree (as in CI); run `nbdev_clean && nbdev_export` and commit to fix a failure.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -n "$(git status --porcelain -uno)" ]; then
  echo "check_sync: the tree has uncommitted changes; commit first (CI runs on a clean clone)"; git status --short -uno; exit 1
fi
nbdev_clean
if [ -n "$(git status --porcelain -uno)" ]; then
  echo "check_sync: notebooks are not clean: run nbdev_clean and commit"; git diff --stat; git checkout -- .; exit 1
fi
nbdev_export
if [ -n "$(git status --porcelain)" ]; then
  echo "check_sync: notebooks and library are not in sync: run nbdev_export and commit"; git status --short; git diff | head -60; exit 1
fi
echo "check_sync: notebooks clean, notebooks and privcausal/ in sync"
