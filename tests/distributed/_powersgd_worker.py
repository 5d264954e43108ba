"""One rank of a PowerSGD scenario: python _powersgd_worker.py LIB:SCENARIO RANK WORLD FILE
LIB is mt (mindtorch_v2) or torch (live PyTorch, the oracle). Trains a small MLP under DDP with a
PowerSGD hook from identical numpy-made weights and batches, and saves every step's parameters,
the hook state's counters and memories, and its pickled round trip to FILE.RANK.npz. Prints OK."""
import os
import pickle
import sys

import numpy as np

LIB, SCENARIO = sys.argv[1].split(":")
if LIB == "mt":
    import mindtorch_v2 as torch
    import mindtorch_v2.distributed as dist
    from mindtorch_v2.distributed.algorithms.ddp_comm_hooks import powerSGD_hook as P
else:
    import torch
    import torch.distributed as dist
    from torch.distributed.algorithms.ddp_comm_hooks import powerSGD_hook as P

    # PyTorch 2.13's batched_powerSGD_hook hands 2-D P and Q to an orthogonalization that takes only
    # 3-D batches (AssertionError); the reference is its hook with them viewed as a batch of one.
    _orthogonalize = P._orthogonalize
    P._orthogonalize = lambda m, epsilon=0: _orthogonalize(m.unsqueeze(0) if m.dim() == 2 else m, epsilon)

    # With several buckets, PyTorch issues the next bucket's all-reduce while the last one's callbacks
    # issue theirs, in an order that can differ between ranks (Gloo then fails on mismatched sizes);
    # the reference waits for each bucket's chain, the order mindtorch_v2's reducer keeps.
    def _one_at_a_time(hook):
        def settled(state, bucket):
            fut = hook(state, bucket)
            fut.wait()
            return fut
        return settled
    P.powerSGD_hook, P.batched_powerSGD_hook = map(_one_at_a_time, (P.powerSGD_hook, P.batched_powerSGD_hook))

STEPS, PER_RANK = 6, 4
# scenario -> (hook, PowerSGDState keywords, DDP keywords)
SCENARIOS = {
    "layerwise": ("powerSGD_hook", {}, {}),
    "same_shape": ("powerSGD_hook", {"batch_tensors_with_same_shape": True}, {}),
    "rank2_eps": ("powerSGD_hook", {"matrix_approximation_rank": 2, "orthogonalization_epsilon": 1e-8,
                                    "min_compression_rate": 1}, {}),
    "qr": ("powerSGD_hook", {"matrix_approximation_rank": 3, "min_compression_rate": 1}, {}),
    "cold": ("powerSGD_hook", {"use_error_feedback": False, "warm_start": False, "start_powerSGD_iter": 1,
                               "compression_stats_logging_frequency": 2}, {}),
    "buckets": ("powerSGD_hook", {"compression_stats_logging_frequency": 3},
                {"bucket_cap_mb": 0.0005, "gradient_as_bucket_view": True}),
    "batched": ("batched_powerSGD_hook", {}, {}),
    "batched_buckets": ("batched_powerSGD_hook", {"warm_start": False}, {"bucket_cap_mb": 0.0005}),
}
SHAPES = [(8, 16), (16, 16), (16, 16), (16, 4)]


def main():
    rank, world, path = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    dist.init_process_group("gloo", init_method=f"file://{path}", rank=rank, world_size=world)
    hook, state_kw, ddp_kw = SCENARIOS[SCENARIO]
    init = np.random.RandomState(0)
    layers = []
    for fan_in, fan_out in SHAPES:
        layer = torch.nn.Linear(fan_in, fan_out)
        with torch.no_grad():
            layer.weight.copy_(torch.tensor(init.standard_normal((fan_out, fan_in)).astype(np.float32) * 0.3))
            layer.bias.copy_(torch.tensor(init.standard_normal(fan_out).astype(np.float32) * 0.1))
        layers += [layer, torch.nn.Tanh()]
    ddp = torch.nn.parallel.DistributedDataParallel(torch.nn.Sequential(*layers[:-1]), **ddp_kw)
    state = P.PowerSGDState(None, **dict({"matrix_approximation_rank": 1, "start_powerSGD_iter": 2}, **state_kw))
    ddp.register_comm_hook(state, getattr(P, hook))
    opt = torch.optim.SGD(ddp.parameters(), lr=0.1)
    out = {}
    for step in range(STEPS):
        data = np.random.RandomState(100 + step)
        x = torch.tensor(data.standard_normal((world * PER_RANK, 8)).astype(np.float32))
        y = torch.tensor(data.standard_normal((world * PER_RANK, 4)).astype(np.float32))
        mine = slice(rank * PER_RANK, (rank + 1) * PER_RANK)
        opt.zero_grad()
        torch.nn.functional.mse_loss(ddp(x[mine]), y[mine]).backward()
        opt.step()
        for name, p in ddp.module.named_parameters():
            out[f"step{step}.{name}"] = np.array(p.detach().tolist(), dtype=np.float32)
        out[f"stats{step}"] = np.array(state.compression_stats() + (state.iter, state.next_stats_report), np.float64)
    saved = state.__getstate__()
    assert "process_group" not in saved and set(saved) == set(P.PowerSGDState.__slots__) - {"process_group"}
    back = pickle.loads(pickle.dumps(state))
    assert back.process_group is not None and back.compression_stats() == state.compression_stats()
    for key in ("error_dict", "p_memory_dict", "q_memory_dict"):
        memory = getattr(back, key)
        assert sorted(memory) == sorted(getattr(state, key)), key
        for index, t in memory.items():
            out[f"{key}.{index}"] = np.array(t.tolist(), dtype=np.float32)
    out["rng"] = np.array(back.rng.randint(1_000_000_000, size=3))
    out["scalars"] = np.array([back.iter, back.start_powerSGD_iter, back.matrix_approximation_rank,
                               back.min_compression_rate, back.orthogonalization_epsilon, back.use_error_feedback,
                               back.warm_start, back.batch_tensors_with_same_shape,
                               back.compression_stats_logging_frequency, back.next_stats_report,
                               back.total_numel_before_compression, back.total_numel_after_compression], np.float64)
    np.savez(f"{path}.{rank}.npz", **out)
    dist.destroy_process_group()
    print("OK", flush=True)
    # PyTorch 2.13's ranks sometimes abort at interpreter teardown ("terminate called without an active
    # exception", as in test_accelerate_power_sgd): the results are saved, so leave without the teardown
    os._exit(0)


if __name__ == "__main__":
    main()
