"""File: bench/torch_add_loop.py — the operator loop the torch bridge benchmarks measure
(bench/torch_op_bench.py times it, bench/torch_op_instr.py counts its instructions): N
torch.add on 1-element tensors in TorchScript, so each op is the dispatcher plus
RecordFunction without Python per op. One thread, as the benchmarks count one thread.
"""


def make():
    """Returns (ops, a, b): ops(a, b, n) runs n torch.add; torch is imported here."""
    import torch
    torch.set_num_threads(1)

    @torch.jit.script
    def ops(a: torch.Tensor, b: torch.Tensor, n: int) -> torch.Tensor:
        for _ in range(n):
            a = torch.add(a, b)
        return a

    return ops, torch.zeros(1), torch.ones(1)
