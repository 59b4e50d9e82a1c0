"""Multi-process training plumbing: set-up under `torchrun`, and the few collectives the trainer needs.

Without `torchrun` (no WORLD_SIZE in the environment) everything degrades to a single process and the
collectives are identities, so the trainer has one code path.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import torch
import torch.distributed as dist


@dataclass(frozen=True)
class DistInfo:
    rank: int = 0
    world: int = 1
    device: torch.device = torch.device("cpu")

    @property
    def is_main(self) -> bool:
        return self.rank == 0


def pick_device(name: str) -> torch.device:
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(name)


def setup(device: str = "auto") -> DistInfo:
    """Join the process group that torchrun describes (gloo on CPU, NCCL on GPUs), or run alone."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    dev = pick_device(device)
    if world == 1:
        return DistInfo(device=dev)
    rank = int(os.environ["RANK"])
    if dev.type == "cuda":
        local = int(os.environ.get("LOCAL_RANK", "0"))
        dev = torch.device("cuda", local)
        torch.cuda.set_device(dev)
    if not dist.is_initialized():
        dist.init_process_group("nccl" if dev.type == "cuda" else "gloo")
    return DistInfo(rank=rank, world=world, device=dev)


def teardown() -> None:
    if dist.is_initialized():
        dist.destroy_process_group()


def all_sum(value: float, info: DistInfo) -> float:
    if info.world == 1:
        return value
    t = torch.tensor([value], dtype=torch.float64, device=info.device)
    dist.all_reduce(t)
    return float(t.item())


def gather_lanes(t: torch.Tensor, info: DistInfo) -> torch.Tensor:
    """Concatenate every rank's tensor along dim 0 (ranks hold consecutive lanes of the global batch)."""
    if info.world == 1:
        return t
    src = t.to(torch.uint8) if t.dtype == torch.bool else t.contiguous()  # gloo has no bool collectives
    parts = [torch.empty_like(src) for _ in range(info.world)]
    dist.all_gather(parts, src)
    return torch.cat(parts, 0).to(t.dtype)


def barrier(info: DistInfo) -> None:
    if info.world > 1:
        dist.barrier()
