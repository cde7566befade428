/* File: nvtx_train.c
 * Layer: examples/nvtx. A training-loop imitation annotated with NVTX only (C API of the
 * nvtx3 headers). kairos traces it without any change when started as
 *   NVTX_INJECTION64_PATH=<build>/lib/libkairos.so \
 *   KAIROS_CONFIG_TEXT='ACTIVITIES_WARMUP_PERIOD_SECS=0;ACTIVITIES_DURATION_MSECS=500;ACTIVITIES_LOG_FILE=/tmp/nvtx_c.json' \
 *   <build>/bin/nvtx_train_c
 * Threading: single-threaded. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <nvtx3/nvToolsExt.h>

static void Busy(long us) {
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  do {
    clock_gettime(CLOCK_MONOTONIC, &b);
  } while ((b.tv_sec - a.tv_sec) * 1000000L + (b.tv_nsec - a.tv_nsec) / 1000 < us);
}

int main(int argc, char** argv) {
  int steps = argc > 1 ? atoi(argv[1]) : 50;
  nvtxDomainHandle_t domain = nvtxDomainCreateA("trainer");
  nvtxDomainNameCategoryA(domain, 1, "compute");
  nvtxDomainNameCategoryA(domain, 2, "data");
  nvtxStringHandle_t step_name = nvtxDomainRegisterStringA(domain, "step");
  for (int i = 0; i < steps; ++i) {
    nvtxEventAttributes_t a = {0};
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    a.message.registered = step_name;
    a.payloadType = NVTX_PAYLOAD_TYPE_INT32;
    a.payload.iValue = i;
    nvtxDomainRangePushEx(domain, &a);

    nvtxEventAttributes_t load = a;
    load.messageType = NVTX_MESSAGE_TYPE_ASCII;
    load.message.ascii = "load_batch";
    load.category = 2;
    load.colorType = NVTX_COLOR_ARGB;
    load.color = 0xFF2E7D32u;
    nvtxDomainRangePushEx(domain, &load);
    Busy(300);
    nvtxDomainRangePop(domain);

    nvtxRangePushA("forward");
    Busy(1500);
    nvtxRangePop();
    nvtxRangePushA("backward");
    Busy(2500);
    nvtxRangePop();
    nvtxMarkA("optimizer_step");
    nvtxDomainRangePop(domain);
  }
  printf("ran %d steps\n", steps);
  return 0;
}
