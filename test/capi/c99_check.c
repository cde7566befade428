/* File: c99_check.c
 * Layer: test/capi. Compiles kairos.h as strict C99 (-std=c99 -pedantic -Werror) and runs
 * the header's inline-flag example, so the public header stays plain C.
 * Threading: single-threaded. */
#include "kairos.h"

#include <stdio.h>
#include <string.h>

int main(void) {
  static const volatile uint32_t* rec;
  int failures = 0;
  if (kairos_version() != KAIROS_VERSION_NUMBER) ++failures;
  if (!rec) rec = kairos_recording_flag();
  if (*rec) kairos_range_push("never");
  if (*rec != 0) ++failures;
  if (strcmp(kairos_status_string(KAIROS_OK), "ok") != 0) ++failures;
  if (kairos_flush() != NULL) ++failures; /* nothing was ever written */
  if (strlen(kairos_last_error()) == 0) ++failures;
  printf("c99_check: %d failures\n", failures);
  return failures;
}
