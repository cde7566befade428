# Writes a synthetic Kineto-format trace of about N MiB for the JSON reader evaluation
# (docs/PERFORMANCE.md): python3 bench/gen_kineto_trace.py OUT.json N
# Synthetic Kineto-shaped trace: cpu_op / cuda_runtime / kernel / memcpy with kairos' arg keys.
import sys
target = int(sys.argv[2]) * 1024 * 1024
out = open(sys.argv[1], "w")
out.write('{\n"schemaVersion": 1,\n"deviceProperties": [],\n"baseTimeNanoseconds": 1700000000000000000,\n"traceEvents": [\n')
n = 0; size = 0; ts = 1000
lines = []
while size < target:
    c = 100000 + n
    batch = [
     '{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":4242,"tid":4242,"ts":%d.000,"dur":47.125,"args":{"External id":%d}}' % (ts, c),
     '{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":4242,"tid":4242,"ts":%d.500,"dur":5.000,"args":{"External id":%d,"cbid":211,"correlation":%d}}' % (ts, c, c),
     '{"ph":"X","cat":"kernel","name":"void gemm_kernel<float, 128, 64>(float const*, float*, int)","pid":0,"tid":7,"ts":%d.250,"dur":10.500,"args":{"External id":%d,"queued":0,"device":0,"context":1,"stream":7,"correlation":%d,"registers per thread":32,"shared memory":3072,"blocks per SM":2,"warps per SM":8,"grid":[264,1,1],"block":[128,1,1],"est. achieved occupancy %%":12,"graph id":0,"graph node id":0}}' % (ts + 20, c, c),
     '{"ph":"X","cat":"gpu_memcpy","name":"Memcpy HtoD (Pageable -> Device)","pid":0,"tid":7,"ts":%d.000,"dur":1.000,"args":{"External id":%d,"device":0,"context":1,"stream":7,"correlation":%d,"bytes":1000000,"memory bandwidth (GB/s)":1000,"graph id":0,"graph node id":0}}' % (ts + 40, c, c),
    ]
    s = ",\n".join(batch)
    if n: s = ",\n" + s
    out.write(s); size += len(s); n += 1; ts += 50
out.write('\n],\n"traceName": "synthetic"\n}\n')
print(n * 4, "events")
