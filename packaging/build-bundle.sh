#!/usr/bin/env bash
# Build the standalone bundle dist/gpumodeler/ (and dist/gpumodeler-<version>-linux.tar.gz)
# with PyInstaller, in a virtual environment of its own so the developer's stays untouched.
#   packaging/build-bundle.sh            build
#   PYTHON=python3.12 packaging/...      build with another interpreter
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
VENV=build/bundle-venv

test -f devices.db || { echo "devices.db is missing: run 'make devices-db' first" >&2; exit 1; }
test -x "$VENV/bin/python" || "$PYTHON" -m venv "$VENV"
"$VENV/bin/python" -m pip install --quiet --upgrade pip
"$VENV/bin/python" -m pip install --quiet . "pyinstaller>=6.10"
"$VENV/bin/pyinstaller" --noconfirm --clean --distpath dist --workpath build/pyinstaller \
    packaging/gpumodeler.spec

# Smoke test: the bundled CLI answers and the GUI renders offscreen.
QT_QPA_PLATFORM=offscreen GPUMODELER_USER_DB="$(mktemp -d)/user.db" \
    dist/gpumodeler/gpumodeler devices list --kind gpu >/dev/null
QT_QPA_PLATFORM=offscreen GPUMODELER_USER_DB="$(mktemp -d)/user.db" \
    dist/gpumodeler/gpumodeler-gui dist/gpumodeler/_internal/examples/saxpy2-gtx970.gpm \
    --screenshot build/bundle-screenshot.png

VERSION=$("$VENV/bin/python" -c "import gpumodeler; print(gpumodeler.__version__)")
tar -C dist -czf "dist/gpumodeler-$VERSION-linux.tar.gz" gpumodeler
echo "built dist/gpumodeler/ and dist/gpumodeler-$VERSION-linux.tar.gz"
