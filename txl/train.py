"""Training the Transformer-XL language model on document-ordered streams.

One loop for one process and for `torchrun` (DDP): AdamW, linear warm-up then cosine decay, gradient
clipping, bf16 autocast on CUDA, gradient accumulation over lane chunks (each chunk keeps its own
memory, so accumulation never breaks the recurrence), evaluation every N steps, and atomic checkpoints
of everything a run needs to continue exactly: model, optimizer, scheduler, stream position, the lanes'
memory and the RNG state. Run it as `ldx train` or `torchrun --nproc-per-node N -m txl.train CONFIG`.

Retrieved memory while training (`inject_k` > 0, off by default): every lane keeps its own document's
earlier windows as a retrieval store keeps segments — a unit key (mean top-layer state) and at most
`inject_states` pooled states per layer (txl.pooling) — and the `inject_k` windows that have left the
memory and are most similar (cosine) to the previous window come back as the model's retrieved slots,
so the model learns to use what `ldx run` and `ldx eval lm` will give it. These banks are not part of a
checkpoint: after a resume they refill from the next windows on (the memory itself resumes exactly).
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import signal
import sys
import time
from dataclasses import asdict
from pathlib import Path

import torch
from pydantic import Field

from pipeline.config import Options
from pipeline.store import atomic_write_bytes, atomic_write_text
from txl import ddp
from txl.evaluate import pick_docs
from txl.memory import Memory
from txl.model import autocast
from txl.recurrence import memory_for, run_batch
from txl.streams import IGNORE, Batch, LaneStream, load_split
from txl.windows import PastWindows, remember_windows, retrieve_windows

STATE_FILE = "train_state.pt"
METRICS_FILE = "metrics.jsonl"


class TrainConfig(Options):
    """Everything a training run depends on; stored in every checkpoint."""

    data_dir: str = "runs/lm_data"  # written by `ldx train prepare`
    out_dir: str = "runs/lm"
    corpora: list[str] | None = None  # None = every corpus of data_dir
    model: dict = Field(default_factory=dict)  # TransformerXLConfig fields (vocab_size comes from the data)
    seg_len: int = 128
    mem_len: int = 128
    batch_size: int = 8  # lanes of the global batch (all processes together)
    accum_steps: int = 1  # the lanes are split into this many chunks per optimizer step
    max_steps: int = 4000
    max_minutes: float | None = None  # stop (and checkpoint) after this much wall time; resumable
    lr: float = 5e-4
    min_lr_ratio: float = 0.1
    warmup_steps: int = 200
    weight_decay: float = 0.01
    betas: tuple[float, float] = (0.9, 0.98)
    grad_clip: float = 0.25
    log_every: int = 10
    eval_every: int = 250
    eval_docs_per_corpus: int = 4
    eval_tokens_per_corpus: int = 20_000
    ckpt_every: int = 50
    seed: int = 0
    threads: int = 2
    device: str = "auto"
    consistency_beta: float = 0.0  # β of the cache-consistency term β·‖state_i − state_{i−1}‖²; 0 = off
    evict: bool = False  # progressive cache eviction: full memory early, shrinking later
    evict_min_frac: float = 0.25  # memory kept at the end of the eviction schedule
    inject_k: int = 0  # retrieved windows per lane and step (own document, out of memory); 0 = off
    inject_states: int = 16  # pooled states per layer kept of each past window (the store's P)
    inject_max_windows: int = 256  # past windows kept per lane; the oldest go first
    export_fp16: str | None = None  # write the final model here (fp16) with txl.checkpoint.save_model
    # warm start: a fresh run (nothing to resume) begins from this shipped checkpoint's weights (same
    # architecture; the optimizer, schedule and streams start anew); its step and tokens carry over
    init_from: str | None = None
    plot: bool = True  # metrics.csv and curves.png at the end of a run


# ---- schedules -----------------------------------------------------------------------------------


def lr_factor(step: int, cfg: TrainConfig) -> float:
    """Linear warm-up to 1, then cosine decay to `min_lr_ratio` at `max_steps`."""
    if step < cfg.warmup_steps:
        return (step + 1) / cfg.warmup_steps
    progress = min(1.0, (step - cfg.warmup_steps) / max(1, cfg.max_steps - cfg.warmup_steps))
    return cfg.min_lr_ratio + (1 - cfg.min_lr_ratio) * 0.5 * (1 + math.cos(math.pi * progress))


def memory_len(step: int, cfg: TrainConfig) -> int:
    """The memory length used at `step`. With progressive eviction: all of it for the first 30% of
    training, then shrinking linearly to `evict_min_frac` of it at 70%, and that to the end."""
    if not cfg.evict:
        return cfg.mem_len
    p = step / max(1, cfg.max_steps)
    frac = 1.0 if p < 0.3 else max(cfg.evict_min_frac, 1 - (1 - cfg.evict_min_frac) * (p - 0.3) / 0.4)
    return max(1, round(cfg.mem_len * frac))


# ---- the model and one step ------------------------------------------------------------------------


def build_model(cfg: TrainConfig, vocab_size: int):
    from txl import TransformerXLConfig, TransformerXLLM

    fields = {"vocab_size": vocab_size, "mem_len": cfg.mem_len, **cfg.model}
    return TransformerXLLM(TransformerXLConfig(**fields))


def segment_state(hidden: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """A window's state: the mean of its top-layer states over real (non-padding) positions, [B, d]."""
    valid = (targets != IGNORE).to(hidden.dtype)[..., None]
    return (hidden * valid).sum(1) / valid.sum(1).clamp(min=1)


# ---- checkpoints and logs ---------------------------------------------------------------------------


def save_state(path: Path, state: dict) -> None:
    buf = io.BytesIO()
    torch.save(state, buf)
    atomic_write_bytes(path, buf.getvalue())


def load_state(path: Path) -> dict:
    return torch.load(path, map_location="cpu", weights_only=True)


class MetricsLog:
    """JSON lines of training and evaluation metrics; on resume, lines past the checkpoint are dropped
    so the log matches the run as if it had never stopped."""

    def __init__(self, path: Path, resume_step: int | None):
        self.path = path
        if resume_step is None:
            atomic_write_text(path, "")
        elif path.exists():
            keep = [ln for ln in path.read_text().splitlines() if ln and json.loads(ln)["step"] <= resume_step]
            atomic_write_text(path, "".join(ln + "\n" for ln in keep))

    def write(self, record: dict) -> None:
        with open(self.path, "a", encoding="utf-8") as f:
            f.write(json.dumps(record) + "\n")

    def records(self) -> list[dict]:
        return [json.loads(ln) for ln in self.path.read_text().splitlines() if ln]


def write_curves(metrics: list[dict], out_dir: Path) -> None:
    """metrics.csv and curves.png (training loss and held-apart perplexity against tokens seen)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pandas as pd

    train = pd.DataFrame([m for m in metrics if m["kind"] == "train"])
    evals = pd.DataFrame([m for m in metrics if m["kind"] == "eval"])
    pd.DataFrame(metrics).to_csv(out_dir / "metrics.csv", index=False)
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    if not train.empty:
        axes[0].plot(train["tokens"] / 1e6, train["loss"], lw=1)
    axes[0].set(xlabel="tokens seen (M)", ylabel="training NLL (nats/token)", title="training loss")
    if not evals.empty:
        for col in sorted(c for c in evals.columns if c.startswith("ppl/")):
            axes[1].plot(evals["tokens"] / 1e6, evals[col], marker="o", ms=3, label=col[4:])
        axes[1].set_yscale("log")
        axes[1].legend(fontsize=7)
    axes[1].set(xlabel="tokens seen (M)", ylabel="perplexity (memory on)", title="held-apart perplexity")
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    plt.close(fig)
    atomic_write_bytes(out_dir / "curves.png", buf.getvalue())


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
        self.stream = LaneStream(
            load_split(data, "train", cfg.corpora), cfg.batch_size, cfg.seg_len, seed=cfg.seed,
            pad_id=manifest["pad_id"],
        )
        self.eval_docs = pick_docs(
            load_split(data, "heldout", cfg.corpora), cfg.eval_docs_per_corpus, cfg.eval_tokens_per_corpus
        )
        self.memory: Memory | None = None  # this process's lanes
        if cfg.inject_k and cfg.mem_len < cfg.seg_len:
            raise ValueError("inject_k needs mem_len >= seg_len (a window's states are read from the memory)")
        n_local = cfg.batch_size // self.info.world
        self.banks = [PastWindows(cfg.inject_states, cfg.inject_max_windows) for _ in range(n_local)]
        self.queries: list[torch.Tensor | None] = [None] * n_local  # each lane's last window key
        self.prev_state: torch.Tensor | None = None  # last window's state per lane (consistency term)
        self.step = 0
        self.tokens = 0
        self.pad_id = manifest["pad_id"]
        self.warm: dict | None = None  # where a warm start came from (TrainConfig.init_from)

    # -- state --
    def state_dict(self) -> dict:
        info = self.info
        memory = self.memory.map(lambda t: ddp.gather_lanes(t, info)).to("cpu") if self.memory is not None else None
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
        self.warm = {"from": str(path), "step": int(blob["extra"].get("step", 0)),
                     "tokens": int(blob["extra"].get("tokens", 0))}

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
        total_nll, total_cons, n_retrieved = 0.0, 0.0, 0
        new_memory, new_states = [], []
        if cfg.inject_k:
            for k in torch.nonzero(local.new_doc).flatten().tolist():
                self.banks[k].clear()
                self.queries[k] = None
        for c in range(cfg.accum_steps):
            lo, hi = c * chunk, (c + 1) * chunk
            sub = local.lanes(lo, hi)
            mem = memory_for(self.memory.lanes(lo, hi) if self.memory is not None else None, sub, mem_len)
            retrieved = None
            if cfg.inject_k:
                # windows older than the memory now holds (eviction shortens it) may be retrieved
                retrieved = retrieve_windows(self.banks[lo:hi], self.queries[lo:hi], mem_len, cfg.inject_k, info.device)
                n_retrieved += retrieved.n_real() if retrieved is not None else 0
            sync = c == cfg.accum_steps - 1 or info.world == 1
            ctx = contextlib.nullcontext() if sync else self.model.no_sync()
            # bf16 on CUDA only: CPU training stays fp32 even where inference takes bf16 ("auto" on AMX),
            # so the shipped model and the equality tests of training keep fp32
            with ctx, autocast(info.device, "auto" if info.device.type == "cuda" else "float32"):
                out = run_batch(self.model, sub, info.device, mem, retrieved)
                nll_sum = out.nll.float().sum()
                # normalised by the global token count and scaled by the world size, because DDP
                # averages gradients over processes: the result is the mean over the combined batch
                loss = nll_sum * info.world / max(n_global, 1)
                state = segment_state(out.hidden.float(), sub.targets.to(info.device))
                if cfg.consistency_beta > 0 and self.prev_state is not None:
                    prev = self.prev_state[c * chunk : (c + 1) * chunk]
                    same_doc = (~sub.new_doc).to(info.device, state.dtype)
                    cons = (((state - prev) ** 2).sum(-1) * same_doc).sum() / cfg.batch_size
                    loss = loss + cfg.consistency_beta * cons * info.world
                    total_cons += cons.item()
            loss.backward()
            if cfg.inject_k:
                with torch.no_grad():
                    queries = self.queries[lo:hi]
                    remember_windows(self.banks[lo:hi], queries, out, sub)
                    self.queries[lo:hi] = queries
            total_nll += nll_sum.item()
            new_memory.append(out.memory)
            new_states.append(state.detach())
        grad_norm = torch.nn.utils.clip_grad_norm_(self.module.parameters(), cfg.grad_clip)
        self.opt.step()
        self.sched.step()
        self.opt.zero_grad(set_to_none=True)
        self.memory = Memory.join(new_memory)
        self.prev_state = torch.cat(new_states, 0)
        self.step += 1
        self.tokens += int(n_global)
        return {
            "loss": ddp.all_sum(total_nll, info) / max(n_global, 1),
            "consistency": ddp.all_sum(total_cons, info),
            "grad_norm": float(grad_norm),
            "lr": self.sched.get_last_lr()[0],
            "mem_len": mem_len,
            "retrieved_slots": ddp.all_sum(n_retrieved, info),
        }

    # -- evaluation --
    def evaluate(self) -> dict:
        from txl.evaluate import evaluate_lm

        cfg = self.cfg
        result = evaluate_lm(
            self.module, self.eval_docs, cfg.seg_len, settings=("memory", "retrieved") if cfg.inject_k else ("memory",),
            special=self.special, n_lanes=min(8, cfg.batch_size), device=self.info.device, retrieve_k=cfg.inject_k,
            past_windows=lambda: PastWindows(cfg.inject_states, cfg.inject_max_windows),
        )
        rec = {}
        for setting, prefix in (("memory", ""), ("retrieved", "retrieved_")):
            for corpus, r in result.get(setting, {}).items():
                rec[f"{prefix}ppl/{corpus}"] = r["ppl"]
                rec[f"{prefix}bpc/{corpus}"] = r["bpc"]
        return rec

    # -- the run --
    def run(self, resume: bool = True, stop_after: int | None = None) -> list[dict]:
        """Train to `max_steps` (or `stop_after` steps, or `max_minutes`), resuming from the checkpoint."""
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
        stop = {"now": False}
        if info.is_main and sys.stdout.isatty() is False:
            signal.signal(signal.SIGTERM, lambda *_: stop.update(now=True))
        start, t_log, tok_log = time.time(), time.time(), self.tokens
        end_step = cfg.max_steps if stop_after is None else min(cfg.max_steps, self.step + stop_after)
        progress = _progress(info.is_main)
        task = progress.add_task("train", total=cfg.max_steps, completed=self.step, loss=float("nan"), tps=0.0)
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
                            f"tok/s {tps:.0f}", highlight=False
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


def export_fp16(module, path: Path, extra: dict) -> None:
    """The model's weights in float16 (half the disk), loadable by txl.checkpoint.load_model."""
    import copy

    from txl.checkpoint import save_model

    save_model(path, copy.deepcopy(module).half(), extra)


def _progress(enabled: bool):
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    return Progress(
        TextColumn("[bold]train"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("loss {task.fields[loss]:.3f}"),
        TextColumn("{task.fields[tps]:.0f} tok/s"),
        TimeRemainingColumn(),
        disable=not enabled,
    )


def load_train_config(path: str | Path | None, overrides: list[str] | None = None) -> TrainConfig:
    """A TrainConfig from a TOML file (its [train] table or the top level) plus key=value overrides."""
    import tomllib

    data: dict = {}
    if path is not None:
        raw = tomllib.loads(Path(path).read_text(encoding="utf-8"))
        data = raw.get("train", raw)
    for item in overrides or []:
        key, _, value = item.partition("=")
        try:
            parsed = json.loads(value)
        except json.JSONDecodeError:
            parsed = value
        target = data
        *parents, last = key.strip().split(".")
        for p in parents:
            target = target.setdefault(p, {})
        target[last] = parsed
    return TrainConfig.model_validate(data)


def main(argv: list[str] | None = None) -> None:
    """`torchrun --nproc-per-node N -m txl.train CONFIG.toml [key=value ...]`"""
    argv = sys.argv[1:] if argv is None else argv
    path = argv[0] if argv and argv[0] != "-" else None  # "-": defaults and overrides only
    cfg = load_train_config(path, argv[1:])
    info = ddp.setup(cfg.device)
    try:
        Trainer(cfg, info).run()
    finally:
        ddp.teardown()


if __name__ == "__main__":
    main()
