#!/bin/sh
# File: install_test.sh
# Layer: test/capi. `cmake --install` into a scratch prefix, then build and run a tiny C
# program against the installed package with pkg-config (and check the CMake package files);
# its kairos_init loads the installed libkairos_core.so beside libkairos.so.
# Usage: install_test.sh BUILD_DIR C_COMPILER
set -eu
build=$1; cc=$2
prefix=$(mktemp -d "${TMPDIR:-/tmp}/kairos_install_XXXXXX")
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
pc=$(find "$prefix" -name kairos.pc | head -n1)
[ -n "$pc" ] || { echo "FAIL: kairos.pc not installed"; exit 1; }
[ -n "$(find "$prefix" -name kairosConfig.cmake)" ] || { echo "FAIL: no kairosConfig.cmake"; exit 1; }
cat > "$prefix/hello.c" <<'C'
#include <kairos.h>
#include <stdio.h>
int main(void) {
  kairos_range_push("hello");
  kairos_range_pop();
  /* The first control call loads libkairos_core.so from beside the installed libkairos.so. */
  if (kairos_init(NULL) != KAIROS_OK) {
    printf("kairos_init: %s\n", kairos_last_error());
    return 2;
  }
  printf("%d\n", kairos_version() == KAIROS_VERSION_NUMBER);
  return kairos_version() == KAIROS_VERSION_NUMBER ? 0 : 1;
}
C
# The .pc file carries the configured prefix; point pkg-config at the scratch copy.
export PKG_CONFIG_PATH=$(dirname "$pc")
flags=$(pkg-config --define-variable=prefix="$prefix" --cflags --libs kairos)
$cc -std=c99 -o "$prefix/hello" "$prefix/hello.c" $flags
libdir=$(pkg-config --define-variable=prefix="$prefix" --variable=libdir kairos)
out=$(env ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0 LD_LIBRARY_PATH="$libdir" "$prefix/hello")
[ "$out" = 1 ] || { echo "FAIL: hello printed '$out'"; exit 1; }
echo "PASS"
