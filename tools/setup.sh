#!/usr/bin/env bash
# One-time (and idempotent) set-up on a fresh Debian 12 / Python 3.11 machine that reaches PyPI, Debian and npm:
#   .venv with the package and its dev requirements (settings.ini), MathJax 3 for the docs site (npm, into the
#   cache tools/build_docs.py reads), and Debian's chromium for the browser test of the site (tests/test_site.py).
# Run from anywhere:  tools/setup.sh      (then: . .venv/bin/activate)
set -euo pipefail
cd "$(dirname "$0")/.."
say() { printf '\n== setup: %s\n' "$*"; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"
  elif command -v sudo >/dev/null; then sudo "$@"
  else echo "setup: need root for: $*" >&2; exit 1; fi
}

apt_pkgs=()
[ -x /usr/bin/chromium ] || apt_pkgs+=(chromium)
command -v npm >/dev/null || apt_pkgs+=(npm)
if [ ${#apt_pkgs[@]} -gt 0 ]; then
  say "apt-get install ${apt_pkgs[*]}"
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${apt_pkgs[@]}" >/dev/null
fi

if [ ! -x .venv/bin/python ]; then
  say "creating .venv with ${PYTHON:-python3} ($(${PYTHON:-python3} --version))"
  "${PYTHON:-python3}" -m venv .venv
fi
. .venv/bin/activate
say 'pip install -e ".[dev,dask]"'
python -m pip install -q --disable-pip-version-check -e ".[dev,dask]"

say "MathJax 3 for the docs site"
python tools/build_docs.py --setup-mathjax

say "done: $(python --version), $(/usr/bin/chromium --version 2>/dev/null || echo 'no chromium')"
