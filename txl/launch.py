"""Training in this process: alone, or as one rank of the group `torchrun` started (`ldx train run
--nproc N` starts torchrun on that same command, so every rank enters here)."""

from __future__ import annotations

from txl import ddp
from txl.train import TrainConfig, Trainer


def run_training(cfg: TrainConfig) -> list[dict]:
    """Trainer.run's records; the process group (when torchrun describes one) is joined first and left
    after, whatever happens."""
    info = ddp.setup(cfg.device)
    try:
        return Trainer(cfg, info).run()
    finally:
        ddp.teardown()
