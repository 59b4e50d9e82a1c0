"""Training the Transformer-XL language model on document-ordered streams.

One loop for one process and for `torchrun` (DDP): AdamW, linear warm-up then cosine decay, gradient
clipping, bf16 autocast on CUDA, gradient accumulation over lane chunks (each chunk keeps its own
memory, so accumulation never breaks the recurrence), evaluation every N steps, and atomic checkpoints
of everything a run needs to continue exactly: model, optimizer, scheduler, stream position, the lanes'
memory and the RNG state. Run it as `ldx train run` (`--nproc N` starts N DDP processes through torchrun, txl.launch).
The configuration and its schedules are txl/train_config.py; checkpoints, logs and curves
txl/train_log.py.

Retrieved memory while training (`inject_k` > 0, off by default): every lane keeps its own document's
earlier windows as a retrieval store keeps segments — a unit key (mean top-layer state) and at most
`inject_states` pooled states per layer (txl.pooling), of every layer or of `inject_layers` only — and
the `inject_k` windows that have left the memory and are most similar (cosine) to the previous window
come back as the model's retrieved slots, so the model learns to use what `ldx run` and `ldx eval lm` will give it. These banks are not part of a
checkpoint: after a resume they refill from the next windows on (the memory itself resumes exactly).
"""

from __future__ import annotations

import contextlib
import json
import signal
import sys
import time
from dataclasses import asdict
from pathlib import Path

import torch

from pipeline.store import atomic_write_text
from txl import ddp
from txl.evaluate import evaluate_lm, pick_docs
from txl.memory import Memory
from txl.model import TransformerXLConfig, TransformerXLLM, autocast
from txl.recurrence import memory_for, run_batch
from txl.streams import IGNORE, Batch, LaneStream, load_split, stream_variant
from txl.train_config import TrainConfig, lr_factor, memory_len
from txl.train_log import (
    METRICS_FILE,
    STATE_FILE,
    MetricsLog,
    export_fp16,
    load_state,
    progress_bar,
    save_state,
    write_curves,
)
from txl.windows import PastWindows, remember_windows, retrieve_windows


def build_model(cfg: TrainConfig, vocab_size: int) -> TransformerXLLM:
    fields = {"vocab_size": vocab_size, "mem_len": cfg.mem_len, **cfg.model}
    return TransformerXLLM(TransformerXLConfig(**fields))


def segment_state(hidden: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """A window's state: the mean of its top-layer states over real (non-padding) positions, [B, d]."""
    valid = (targets != IGNORE).to(hidden.dtype)[..., None]
    return (hidden * valid).sum(1) / valid.sum(1).clamp(min=1)


# ---- the loop ---------------------------------------------------------------------------------------


class Trainer:
    def __init__(self, cfg: TrainConfig, info: ddp.DistInfo | None = None):
        self.cfg = cfg
        self.info = info or ddp.DistInfo(device=ddp.pick_device(cfg.device))
        if cfg.batch_size % (self.info.world * cfg.accum_steps):
            raise ValueError("batch_size must be divisible by (processes × accum_steps)")
        torch.set_num_threads(cfg.threads)
        torch.manual_seed(cfg.seed)
        self.out = Path(cfg.out_dir)
        data = Path(cfg.data_dir)
        manifest = json.loads((data / "manifest.json").read_text())
        self.manifest = manifest
        self.special = torch.tensor(sorted(manifest["special_ids"]))
        self.model = build_model(cfg, manifest["vocab_size"]).to(self.info.device)
        self.module = self.model
        if self.info.world > 1:
            self.model = torch.nn.parallel.DistributedDataParallel(self.module, find_unused_parameters=True)
        decay = [p for n, p in self.module.named_parameters() if p.dim() >= 2 and "emb" not in n]
        no_decay = [p for n, p in self.module.named_parameters() if not (p.dim() >= 2 and "emb" not in n)]
        self.opt = torch.optim.AdamW(
            [{"params": decay, "weight_decay": cfg.weight_decay}, {"params": no_decay, "weight_decay": 0.0}],
            lr=cfg.lr,
            betas=cfg.betas,
        )
        self.sched = torch.optim.lr_scheduler.LambdaLR(self.opt, lambda s: lr_factor(s, cfg))
        variant = {"scope": self.module.cfg.scope_embedding, "strip_blocks": cfg.strip_block_tokens}
        self.stream = LaneStream(
            stream_variant(load_split(data, "train", cfg.corpora), data, **variant),
            cfg.batch_size,
            cfg.seg_len,
            seed=cfg.seed,
            pad_id=manifest["pad_id"],
        )
        self.eval_docs = stream_variant(
            pick_docs(
                load_split(data, "heldout", cfg.corpora), cfg.eval_docs_per_corpus, cfg.eval_tokens_per_corpus
            ),
            data,
            **variant,
        )
        self.memory: Memory | None = None  # this process's lanes
        if cfg.inject_k and cfg.mem_len < cfg.seg_len:
            raise ValueError("inject_k needs mem_len >= seg_len (a window's states are read from the memory)")
        n_local = cfg.batch_size // self.info.world
        self.banks = [
            PastWindows(cfg.inject_states, cfg.inject_max_windows, cfg.inject_layers) for _ in range(n_local)
        ]
        self.queries: list[torch.Tensor | None] = [None] * n_local  # each lane's last window key
        self.prev_state: torch.Tensor | None = None  # last window's state per lane (consistency term)
        self.step = 0
        self.tokens = 0
        self.pad_id = manifest["pad_id"]
        self.warm: dict | None = None  # where a warm start came from (TrainConfig.init_from)

    # -- state --
    def state_dict(self) -> dict:
        info = self.info
        memory = (
            self.memory.map(lambda t: ddp.gather_lanes(t, info)).to("cpu")
            if self.memory is not None
            else None
        )
        rng = torch.get_rng_state()
        return {
            "step": self.step,
            "tokens": self.tokens,
            "config": self.cfg.model_dump(mode="json"),
            "model_config": asdict(self.module.cfg),
            "model": self.module.state_dict(),
            "optimizer": self.opt.state_dict(),
            "scheduler": self.sched.state_dict(),
            "stream": self.stream.state_dict(),
            "memory": memory.state_dict() if memory is not None else {},  # the format of earlier runs
            "prev_state": None if self.prev_state is None else ddp.gather_lanes(self.prev_state, info).cpu(),
            "rng": ddp.gather_lanes(rng[None], info) if info.world > 1 else rng[None],
            "cuda_rng": torch.cuda.get_rng_state() if self.info.device.type == "cuda" else None,
            "warm": json.dumps(self.warm),
        }

    def load_state_dict(self, state: dict) -> None:
        self.module.load_state_dict(state["model"])
        self.opt.load_state_dict(state["optimizer"])
        self.sched.load_state_dict(state["scheduler"])
        self.stream.load_state_dict(state["stream"])
        a, b = self._my_lanes()
        dev = self.info.device
        memory = Memory.from_state_dict(state["memory"])
        self.memory = memory.lanes(a, b).to(dev) if memory is not None else None
        self.prev_state = None if state["prev_state"] is None else state["prev_state"][a:b].to(dev)
        self.step, self.tokens = int(state["step"]), int(state["tokens"])
        self.warm = json.loads(state.get("warm", "null"))
        rng = state["rng"]
        torch.set_rng_state(rng[self.info.rank] if len(rng) > self.info.rank else rng[0])
        if state.get("cuda_rng") is not None and dev.type == "cuda":
            torch.cuda.set_rng_state(state["cuda_rng"])

    def warm_start(self, path: Path) -> None:
        """The weights of a shipped checkpoint (fp16 on disk, trained on in fp32); a warm restart that
        the model card records."""
        blob = torch.load(path, map_location="cpu", weights_only=True)
        weights = {k: v.float() if v.is_floating_point() else v for k, v in blob["state_dict"].items()}
        self.module.load_state_dict(weights)
        self.warm = {
            "from": str(path),
            "step": int(blob["extra"].get("step", 0)),
            "tokens": int(blob["extra"].get("tokens", 0)),
        }

    def _my_lanes(self) -> tuple[int, int]:
        per = self.cfg.batch_size // self.info.world
        return self.info.rank * per, (self.info.rank + 1) * per

    def checkpoint(self) -> None:
        state = self.state_dict()  # collectives: every rank takes part
        if self.info.is_main:
            save_state(self.out / STATE_FILE, state)

    # -- one optimizer step --
    def train_step(self, batch: Batch) -> dict:
        cfg, info = self.cfg, self.info
        a, b = self._my_lanes()
        local = batch.lanes(a, b)
        n_global = ddp.all_sum(local.n_targets, info)
        mem_len = memory_len(self.step, cfg)
        chunk = local.targets.size(0) // cfg.accum_steps
        self.model.train()
        if cfg.inject_k:
            for k in torch.nonzero(local.new_doc).flatten().tolist():
                self.banks[k].clear()
                self.queries[k] = None
        sums = {"nll": 0.0, "consistency": 0.0, "retrieved": 0}
        new_memory, new_states = [], []
        for c in range(cfg.accum_steps):
            sync = c == cfg.accum_steps - 1 or info.world == 1
            memory, state = self._chunk_step(local, c * chunk, (c + 1) * chunk, mem_len, n_global, sync, sums)
            new_memory.append(memory)
            new_states.append(state)
        grad_norm = torch.nn.utils.clip_grad_norm_(self.module.parameters(), cfg.grad_clip)
        self.opt.step()
        self.sched.step()
        self.opt.zero_grad(set_to_none=True)
        self.memory = Memory.join(new_memory)
        self.prev_state = torch.cat(new_states, 0)
        self.step += 1
        self.tokens += int(n_global)
        return {
            "loss": ddp.all_sum(sums["nll"], info) / max(n_global, 1),
            "consistency": ddp.all_sum(sums["consistency"], info),
            "grad_norm": float(grad_norm),
            "lr": self.sched.get_last_lr()[0],
            "mem_len": mem_len,
            "retrieved_slots": ddp.all_sum(sums["retrieved"], info),
        }

    def _chunk_step(
        self, local: Batch, lo: int, hi: int, mem_len: int, n_global: int, sync: bool, sums: dict
    ) -> tuple[Memory, torch.Tensor]:
        """Forward and backward over lanes lo..hi of this process (one accumulation chunk); adds to
        `sums` and returns the chunk's new memory and window states."""
        cfg, info = self.cfg, self.info
        sub = local.lanes(lo, hi)
        mem = memory_for(self.memory.lanes(lo, hi) if self.memory is not None else None, sub, mem_len)
        retrieved = None
        if cfg.inject_k:
            # windows older than the memory now holds (eviction shortens it) may be retrieved
            retrieved = retrieve_windows(
                self.banks[lo:hi], self.queries[lo:hi], mem_len, cfg.inject_k, info.device
            )
            sums["retrieved"] += retrieved.n_real() if retrieved is not None else 0
        ctx = contextlib.nullcontext() if sync else self.model.no_sync()
        # bf16 on CUDA only: CPU training stays fp32 even where inference is asked for bf16, so the
        # shipped model and the equality tests of training keep fp32
        with ctx, autocast(info.device, "auto" if info.device.type == "cuda" else "float32"):
            out = run_batch(self.model, sub, info.device, mem, retrieved)
            nll_sum = out.nll.float().sum()
            # normalised by the global token count and scaled by the world size, because DDP
            # averages gradients over processes: the result is the mean over the combined batch
            loss = nll_sum * info.world / max(n_global, 1)
            state = segment_state(out.hidden.float(), sub.targets.to(info.device))
            if cfg.consistency_beta > 0 and self.prev_state is not None:
                same_doc = (~sub.new_doc).to(info.device, state.dtype)
                cons = (((state - self.prev_state[lo:hi]) ** 2).sum(-1) * same_doc).sum() / cfg.batch_size
                loss = loss + cfg.consistency_beta * cons * info.world
                sums["consistency"] += cons.item()
        loss.backward()
        if cfg.inject_k:
            with torch.no_grad():
                queries = self.queries[lo:hi]
                remember_windows(self.banks[lo:hi], queries, out, sub)
                self.queries[lo:hi] = queries
        sums["nll"] += nll_sum.item()
        return out.memory, state.detach()

    # -- evaluation --
    def evaluate(self) -> dict:
        cfg = self.cfg
        result = evaluate_lm(
            self.module,
            self.eval_docs,
            cfg.seg_len,
            settings=("memory", "retrieved") if cfg.inject_k else ("memory",),
            special=self.special,
            n_lanes=min(8, cfg.batch_size),
            device=self.info.device,
            retrieve_k=cfg.inject_k,
            past_windows=lambda: PastWindows(cfg.inject_states, cfg.inject_max_windows, cfg.inject_layers),
        )
        rec = {}
        for setting, prefix in (("memory", ""), ("retrieved", "retrieved_")):
            for corpus, r in result.get(setting, {}).items():
                rec[f"{prefix}ppl/{corpus}"] = r["ppl"]
                rec[f"{prefix}bpc/{corpus}"] = r["bpc"]
        return rec

    # -- the run --
    def _start(self, resume: bool) -> MetricsLog | None:
        """Resume from the checkpoint (or warm-start) and open the metrics log (main rank only)."""
        cfg, info = self.cfg, self.info
        self.out.mkdir(parents=True, exist_ok=True)
        state_path = self.out / STATE_FILE
        resumed = resume and state_path.exists()
        if resumed:
            self.load_state_dict(load_state(state_path))
        elif cfg.init_from:
            self.warm_start(Path(cfg.init_from))
        log = MetricsLog(self.out / METRICS_FILE, self.step if resumed else None) if info.is_main else None
        if info.is_main:
            atomic_write_text(self.out / "config.json", json.dumps(cfg.model_dump(mode="json"), indent=2))
        return log

    def run(self, resume: bool = True, stop_after: int | None = None) -> list[dict]:
        """Train to `max_steps` (or `stop_after` steps, or `max_minutes`), resuming from the checkpoint."""
        cfg, info = self.cfg, self.info
        log = self._start(resume)
        stop = {"now": False}
        if info.is_main and sys.stdout.isatty() is False:
            signal.signal(signal.SIGTERM, lambda *_: stop.update(now=True))
        start, t_log, tok_log = time.time(), time.time(), self.tokens
        end_step = cfg.max_steps if stop_after is None else min(cfg.max_steps, self.step + stop_after)
        progress = progress_bar(info.is_main)
        task = progress.add_task(
            "train", total=cfg.max_steps, completed=self.step, loss=float("nan"), tps=0.0
        )
        with progress:
            while self.step < end_step:
                batch = self.stream.next_batch()
                m = self.train_step(batch)
                progress.update(task, completed=self.step, loss=m["loss"])
                if self.step % cfg.log_every == 0 and log is not None:
                    now = time.time()
                    tps = (self.tokens - tok_log) / max(now - t_log, 1e-9)
                    t_log, tok_log = now, self.tokens
                    progress.update(task, tps=tps)
                    log.write({"kind": "train", "step": self.step, "tokens": self.tokens, "tok_s": tps, **m})
                    if not progress.console.is_terminal:
                        progress.console.print(
                            f"step {self.step} tokens {self.tokens} loss {m['loss']:.4f} lr {m['lr']:.2e} "
                            f"tok/s {tps:.0f}",
                            highlight=False,
                        )
                if cfg.eval_every and self.step % cfg.eval_every == 0 and self.eval_docs:
                    rec = self.evaluate() if info.is_main else {}
                    if log is not None:
                        log.write({"kind": "eval", "step": self.step, "tokens": self.tokens, **rec})
                        progress.console.print(f"eval @ {self.step}: {json.dumps(rec)}", highlight=False)
                    t_log = time.time()  # tokens/s measures training only
                out_of_time = cfg.max_minutes is not None and time.time() - start > cfg.max_minutes * 60
                stop_file = (self.out / "STOP").exists()
                halt = stop["now"] or out_of_time or stop_file
                if self.step % cfg.ckpt_every == 0 or halt or self.step == end_step:
                    self.checkpoint()
                if halt:
                    break
        ddp.barrier(info)
        if log is None:
            return []
        records = log.records()
        if cfg.plot:
            write_curves(records, self.out)
        if cfg.export_fp16:
            export_fp16(self.module, Path(cfg.export_fp16), self.model_facts())
        return records

    def model_facts(self) -> dict:
        """What a shipped checkpoint says about its training (txl.checkpoint's `extra`)."""
        return {
            "step": self.step,
            "tokens": self.tokens,
            "seg_len": self.cfg.seg_len,
            "mem_len": self.cfg.mem_len,
            "tokenizer_sha256": self.manifest.get("tokenizer_sha256", ""),
            "train_config": json.dumps(self.cfg.model_dump(mode="json")),
            "warm_start": json.dumps(self.warm),
        }
