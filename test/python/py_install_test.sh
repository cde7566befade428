#!/bin/sh
# File: py_install_test.sh
# Layer: test/python. `cmake --install` into a scratch prefix; the installed Python package
# imports from <prefix>/<KAIROS_PYTHON_INSTALL_DIR> and loads the installed libkairos (not the
# build tree's), and the torch bridge is installed next to it when it was built.
# Usage: py_install_test.sh BUILD_DIR PYTHON PY_INSTALL_DIR HAVE_TORCH
set -eu
build=$1; py=$2; pydir=$3; have_torch=$4
prefix=$(mktemp -d "${TMPDIR:-/tmp}/kairos_pyinstall_XXXXXX")
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
out=$(cd / && env -u LD_PRELOAD -u KAIROS_LIBRARY PYTHONPATH="$prefix/$pydir" "$py" -c '
import kairos, kairos._lib as L
print(kairos.__file__)
print(L.library_path())
print(kairos.version())')
echo "$out"
echo "$out" | sed -n 1p | grep -q "^$prefix/$pydir/kairos/__init__.py$" || { echo "FAIL: package not from the prefix"; exit 1; }
echo "$out" | sed -n 2p | grep -q "^$prefix/" || { echo "FAIL: libkairos not from the prefix"; exit 1; }
echo "$out" | sed -n 3p | grep -q "^(0, 1, 0)$" || { echo "FAIL: version"; exit 1; }
if [ "$have_torch" = ON ] && [ ! -f "$prefix/$pydir/kairos/_kairos_torch.so" ]; then
  echo "FAIL: torch bridge not installed"; exit 1
fi
echo PASS
