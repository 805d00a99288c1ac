#!/usr/bin/env bash
# Installs Apache Otava (PyPI apache-otava, the change point detector cloud-bulldozer/orion runs
# over k8s-netperf's KPIs) into a Python virtual environment, for the test that checks that
# `cnperf trend` finds the change points Otava finds (internal/changepoint/otava_test.go, which
# runs this script). A venv that already has the pinned version is left alone. Prints the venv's
# python as its last line.
# usage: install-otava.sh   env: OTAVA_VENV (default ${XDG_CACHE_HOME:-$HOME/.cache}/cnperf/otava-<version>)
set -euo pipefail
OTAVA_VERSION=0.8.0
VENV=${OTAVA_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/cnperf/otava-$OTAVA_VERSION}
py=$VENV/bin/python
if [ -x "$py" ] && "$py" -c "from importlib.metadata import version; assert version('apache-otava') == '$OTAVA_VERSION'" 2>/dev/null; then
  echo "$py"
  exit 0
fi
command -v python3 >/dev/null || { echo "install-otava: python3 is not installed (Debian: python3 python3-venv)" >&2; exit 1; }
rm -rf "$VENV"
mkdir -p "$(dirname "$VENV")"
python3 -m venv "$VENV" >&2 || { echo "install-otava: python3 -m venv failed (Debian: apt-get install python3-venv)" >&2; exit 1; }
"$VENV/bin/pip" install --quiet --disable-pip-version-check "apache-otava==$OTAVA_VERSION" >&2
"$py" -c "import otava.analysis" >&2
echo "$py"
