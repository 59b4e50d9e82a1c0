"""The retrieval head over segment keys: what makes a pooled state findable.

A raw key is a segment's states pooled to one unit vector (`txl.pooling.pool_key`). The mean of the
last layer's states is anisotropic (median cosine to other windows 0.82–0.91), so the inner product
ranks by noise, and a language model's last layer holds what predicts the next token more than what
the segment is about. A head reads one layer's states (`layer`: 0 the embedded input, i the input of
layer i, -1 the last layer's output), pools them evenly or weighted by each token's inverse document
frequency (`pooling` "idf": the weights are the head's, counted over its training passages, special
tokens weighted 0; "bm25": the same with BM25's term-frequency saturation, `txl.pooling.token_weights`),
centres the pooled key, maps it linearly to `dim` dimensions and normalises
again; the map is trained contrastively on frozen states (retrieval/train_keys.py). The encoder is
untouched.

A head belongs to one encoder: it records the sha256 of the checkpoint it was trained on, and its own
id (a hash of its weights) is what a store records beside the model id. `attach` ties a head to a
loaded model, so every caller that computes a key from that model (`model_key`: the index stage,
injection lookups, the query of `ldx ask`'s dense arm) uses it without another argument. `RawKeys`
attached in its place gives a head's pooled keys without the map: what its training reads.
"""

from __future__ import annotations

import hashlib
import time
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from torch import nn

from pipeline.records import sha256_file
from txl.model import TXLOutput
from txl.pooling import KEY_LR, WEIGHTED, pool_key, token_weights

KEYS_FILE = Path(__file__).resolve().parents[1] / "data" / "models" / "keys.pt"


class KeyHeadError(ValueError):
    """A key-head file that cannot be read or does not fit; the message names the file."""


@dataclass
class RawKeys:
    """Pooled keys without a map: the states of `layer` pooled by `pooling` (`idf`: [vocab] token
    weights for "idf" and "bm25"). Attached to a model, it gives the raw keys a head of that pooling is
    trained on."""

    layer: int = -1
    pooling: str = "mean"
    idf: np.ndarray | None = None

    @property
    def identity(self) -> str:
        return "" if (self.layer, self.pooling) == (-1, "mean") else f"raw@L{self.layer}-{self.pooling}"

    def fingerprint(self) -> bytes:
        """What a cache of these raw keys is keyed by besides its texts: nothing for the last layer's
        mean (older caches stay valid), else the layer, pooling and weights."""
        if not self.identity:
            return b""
        weights = b"" if self.idf is None else np.asarray(self.idf, dtype=np.float32).tobytes()
        return self.identity.encode() + weights

    def pool(
        self, model: nn.Module, out: TXLOutput, lane: int, span: slice, ids: Sequence[int]
    ) -> np.ndarray:
        """The raw key of the segment at tokens `span` of lane `lane` of a forward output."""
        at_last = self.layer in (-1, model.cfg.n_layer)
        states = out.hidden if at_last else out.layer_inputs[self.layer]  # [B, T, d]
        weights = token_weights(ids, self.idf, self.pooling)
        return pool_key(states[lane, span].float().cpu().numpy(), self.pooling, weights)

    def apply_np(self, raw: np.ndarray) -> np.ndarray:
        return np.asarray(raw, dtype=np.float32)

    def context_free(self, model: nn.Module) -> bool:
        """Whether these keys read the tokens alone: layer 0 of a model whose input adds no tag or scope
        vector, so that `embedded` gives them without running the layers."""
        return self.layer == 0 and not (model.cfg.tag_embedding or model.cfg.scope_embedding)

    def embedded(self, model: nn.Module, id_lists: Sequence[Sequence[int]]) -> np.ndarray:
        """[N, d] raw keys of N segments' token ids (as the forward pass reads them, prefix included)
        looked up in the embedding table: what `pool` gives after a forward pass when `context_free`
        holds, for the cost of one embedding call over the distinct ids."""
        if not self.context_free(model):
            raise ValueError(f"{self.identity or 'last-layer mean'} keys read context: run the model")
        if not id_lists:
            return np.zeros((0, model.cfg.d_model), dtype=np.float32)
        vocab = np.unique(np.concatenate([np.asarray(ids, dtype=np.int64) for ids in id_lists]))
        device = next(model.parameters()).device
        with torch.no_grad():
            table = model.emb(torch.from_numpy(vocab)[None].to(device))[0].float().cpu().numpy()  # [V', d]
        out = np.empty((len(id_lists), table.shape[1]), dtype=np.float32)
        for i, ids in enumerate(id_lists):
            ids = np.asarray(ids, dtype=np.int64)
            weights = token_weights(ids, self.idf, self.pooling)
            out[i] = pool_key(table[np.searchsorted(vocab, ids)], self.pooling, weights)
        return out


class KeyHead(nn.Module):
    """raw unit key [.., d_in] -> unit key [.., dim]: normalise(h) with h = W (x - mean); with `hidden`
    > 0, normalise(h + MLP(h)), a residual two-layer MLP (GELU, `hidden` wide) whose output layer starts
    at zero, so training starts from the linear head and the MLP adds only what pays. Its raw keys are
    the states of `layer` pooled by `pooling` ("idf", "bm25": weighted by the `idf` buffer, [vocab])."""

    def __init__(
        self,
        d_in: int,
        dim: int = 256,
        encoder_sha256: str = "",
        pooling: str = "mean",
        hidden: int = 0,
        layer: int = -1,
        idf: np.ndarray | torch.Tensor | None = None,
    ):
        super().__init__()
        if pooling in WEIGHTED and idf is None:
            raise KeyHeadError(f"a {pooling}-pooling key head needs its token weights")
        self.pooling, self.layer = pooling, layer  # how the raw keys it was trained on were pooled
        self.register_buffer("mean", torch.zeros(d_in))
        self.register_buffer("idf", None if idf is None else torch.as_tensor(idf, dtype=torch.float32))
        self.proj = nn.Linear(d_in, dim, bias=False)
        self.mlp = None
        if hidden > 0:
            self.mlp = nn.Sequential(nn.Linear(dim, hidden), nn.GELU(), nn.Linear(hidden, dim))
            nn.init.zeros_(self.mlp[2].weight)
            nn.init.zeros_(self.mlp[2].bias)
        # InfoNCE temperature as log(1/τ); trained with the map, unused at search time
        self.log_scale = nn.Parameter(torch.tensor(float(np.log(20.0))))
        self.encoder_sha256 = encoder_sha256

    @property
    def dim(self) -> int:
        return self.proj.out_features

    @property
    def hidden(self) -> int:
        return 0 if self.mlp is None else self.mlp[0].out_features

    def forward(self, raw: torch.Tensor) -> torch.Tensor:
        h = self.proj(raw - self.mean)
        if self.mlp is not None:
            h = h + self.mlp(h)
        return nn.functional.normalize(h, dim=-1)

    def fit_mean(self, raw: torch.Tensor) -> None:
        """The centre: the mean raw key of the training segments."""
        with torch.no_grad():
            self.mean.copy_(raw.float().mean(0))
            # starting from the identity on the top principal directions keeps the first steps sane
            _, _, v = torch.linalg.svd(raw.float() - self.mean, full_matrices=False)
            init = torch.zeros(self.dim, raw.shape[1])
            n = min(self.dim, v.shape[0])
            init[:n] = v[:n]
            self.proj.weight.copy_(init)

    def apply_np(self, raw: np.ndarray) -> np.ndarray:
        """Numpy in, numpy out ([d_in] or [N, d_in]), float32, also when called inside a bf16 autocast
        (the encoders' precision): the head is small and its keys are stored as float32."""
        with torch.no_grad(), torch.autocast("cpu", enabled=False):
            return self(torch.from_numpy(np.asarray(raw, dtype=np.float32))).numpy()

    @property
    def raw_keys(self) -> RawKeys:
        """The pooling of the raw keys this head reads."""
        idf = None if self.idf is None else self.idf.numpy()
        return RawKeys(self.layer, self.pooling, idf)

    def pool(
        self, model: nn.Module, out: TXLOutput, lane: int, span: slice, ids: Sequence[int]
    ) -> np.ndarray:
        return self.raw_keys.pool(model, out, lane, span, ids)

    @property
    def identity(self) -> str:
        """A short hash of the weights: what a store records, so keys of another head are refused."""
        h = hashlib.sha256()
        mlp = [] if self.mlp is None else [p for _, p in sorted(self.mlp.state_dict().items())]
        idf = [] if self.idf is None else [self.idf]
        for t in (self.mean, self.proj.weight, *mlp, *idf):
            h.update(t.detach().float().cpu().numpy().tobytes())
        if self.layer != -1:  # heads of the last layer keep the ids they had before `layer` existed
            h.update(f"layer {self.layer}".encode())
        return "keys@" + h.hexdigest()[:12]

    def save(self, path: str | Path, extra: dict | None = None) -> None:
        blob = {
            "d_in": self.mean.numel(),
            "dim": self.dim,
            "encoder_sha256": self.encoder_sha256,
            "pooling": self.pooling,
            "layer": self.layer,
            "hidden": self.hidden,
            "state_dict": {k: v.detach().cpu() for k, v in self.state_dict().items()},
            "extra": extra or {},
        }
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        torch.save(blob, Path(path))


def load_key_head(path: str | Path) -> KeyHead:
    """A saved head, in eval mode on the CPU (weights_only: a key file carries no code)."""
    try:
        blob = torch.load(Path(path), map_location="cpu", weights_only=True)
        head = KeyHead(
            int(blob["d_in"]),
            int(blob["dim"]),
            str(blob["encoder_sha256"]),
            str(blob["pooling"]),
            int(blob.get("hidden", 0)),  # a head saved before the MLP option has none
            int(blob.get("layer", -1)),  # nor one saved before `layer`: it read the last layer
            blob["state_dict"].get("idf"),
        )
        head.load_state_dict(blob["state_dict"])
    except (OSError, RuntimeError, KeyError, TypeError) as e:
        raise KeyHeadError(
            f"{path}: not a key head ({str(e).splitlines()[0] if str(e) else type(e).__name__})"
        ) from None
    head.extra = blob.get("extra", {})
    return head.eval()


_HEADS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def attach(model: nn.Module, head: KeyHead | RawKeys | None) -> None:
    """Keys of `model` go through `head` from now on (None: raw keys of the last layer's mean again).
    Anything with `pool`, `apply_np`, `pooling` and `identity` may stand in for a head (a benchmark's
    pooling of every layer at once). Held beside the model, not in it, so the model's state_dict and
    checkpoints stay as they are."""
    if head is None:
        _HEADS.pop(model, None)
        return
    d_model, n_layer = model.cfg.d_model, model.cfg.n_layer
    if isinstance(head, KeyHead) and head.mean.numel() != d_model:
        raise KeyHeadError(f"key head reads {head.mean.numel()}-d keys, the model makes {d_model}-d ones")
    if not -1 <= getattr(head, "layer", -1) <= n_layer:
        raise KeyHeadError(f"key head reads layer {head.layer}, the model has {n_layer}")
    _HEADS[model] = head


def head_of(model: nn.Module) -> KeyHead | RawKeys | None:
    return _HEADS.get(model)


def key_layer(model: nn.Module) -> int:
    """The layer whose input the model's keys read; n_layer for the last layer's output."""
    layer = (head_of(model) or RawKeys()).layer
    return model.cfg.n_layer if layer == -1 else layer


def key_identity(model: nn.Module) -> str:
    """What a store records about its keys: the attached head's id, "" for raw keys."""
    head = head_of(model)
    return head.identity if head is not None else ""


def key_dim(model: nn.Module) -> int:
    head = head_of(model)
    return head.dim if isinstance(head, KeyHead) else model.cfg.d_model


def model_key(
    model: nn.Module, out: TXLOutput, lane: int, span: slice, ids: Sequence[int], pooling: str = "mean"
) -> np.ndarray:
    """The unit key of the segment at tokens `span` of lane `lane` of a forward output, `ids` its token
    ids: the states of the layer the model's key head reads, pooled as it pools them, through the head.
    Without a head, the last layer pooled by `pooling`; a head pools its own way, and any other
    `pooling` asked of it is refused."""
    head = head_of(model) or RawKeys(pooling=pooling)
    if pooling not in ("mean", head.pooling):
        raise KeyHeadError(f"the key head was trained on {head.pooling!r}-pooled keys, not {pooling!r}")
    return head.apply_np(head.pool(model, out, lane, span, ids))


def head_for(checkpoint: str | Path, keys: str = "auto") -> KeyHead | None:
    """The key head to use with an encoder checkpoint. `keys`: "auto" = the shipped data/models/keys.pt
    when it was trained on this checkpoint (else raw keys), "raw" = none, else a head file, refused when
    it was trained on another checkpoint."""
    if keys == "raw":
        return None
    path = KEYS_FILE if keys == "auto" else Path(keys)
    if keys == "auto" and not path.is_file():
        return None
    if not path.is_file():
        raise KeyHeadError(f"{path}: no such key head")
    head = load_key_head(path)
    if head.encoder_sha256 != sha256_file(Path(checkpoint)):
        if keys == "auto":
            return None
        raise KeyHeadError(
            f"{path}: trained on encoder {head.encoder_sha256[:12]}, not {Path(checkpoint).name}"
        )
    return head


# ---- training on frozen keys ---------------------------------------------------------------------


@dataclass
class FitConfig:
    dim: int = 256
    hidden: int = 0  # width of the head's residual MLP (0: the linear head, as shipped)
    batch_size: int = 256
    lr: float = KEY_LR
    weight_decay: float = 1e-4
    max_epochs: int = 100
    patience: int = 8  # epochs without a better validation MRR before stopping
    time_budget_s: float | None = None  # training stops (keeping the best epoch) after this long
    seed: int = 0


@dataclass
class PairTable:
    """Positive pairs over the rows of a raw-key matrix: row a should find row b. `group` ties rows of
    one document (never each other's negatives), `neg` a hard negative row (-1: none); `cause` ties
    pairs of cases with the same charge or cause of action (-1: none), never each other's negatives
    either."""

    a: np.ndarray
    b: np.ndarray
    group: np.ndarray
    neg: np.ndarray
    cause: np.ndarray | None = None

    def take(self, rows: np.ndarray) -> PairTable:
        cause = None if self.cause is None else self.cause[rows]
        return PairTable(self.a[rows], self.b[rows], self.group[rows], self.neg[rows], cause)


def rank_metrics(z: torch.Tensor, pairs: PairTable, candidates: np.ndarray) -> dict[str, float]:
    """MRR, recall@1 and recall@10 of each pair's b among the candidate rows, scored by z[a]·z[c]
    (a itself never counts)."""
    cand = torch.from_numpy(candidates)
    scores = z[torch.from_numpy(pairs.a)] @ z[cand].T
    scores[torch.from_numpy(pairs.a)[:, None] == cand[None]] = -float("inf")
    gold = (z[torch.from_numpy(pairs.a)] * z[torch.from_numpy(pairs.b)]).sum(1, keepdim=True)
    rank = (~(scores <= gold)).sum(1).float() + 1  # a NaN key ranks last, never first
    return {
        "mrr": round(float((1 / rank).mean()), 4),
        "r@1": round(float((rank <= 1).float().mean()), 4),
        "r@10": round(float((rank <= 10).float().mean()), 4),
    }


def _batch_loss(head: KeyHead, x: torch.Tensor, p: PairTable) -> torch.Tensor:
    """Symmetric InfoNCE over the batch: each a against every b (and its own hard negative), each b
    against every a; pairs of one document (or of one cause) are masked out of each other's negatives. Masks fill the
    scaled logits with a finite floor: -inf times the learned scale would make its gradient NaN."""
    za, zb = head(x[torch.from_numpy(p.a)]), head(x[torch.from_numpy(p.b)])
    has_neg = torch.from_numpy(p.neg >= 0)
    zn = head(x[torch.from_numpy(p.neg[p.neg >= 0])])
    scale = head.log_scale.exp().clamp(max=100.0)
    group = torch.from_numpy(p.group)
    same = group[:, None] == group[None]
    if p.cause is not None:
        cause = torch.from_numpy(p.cause)
        same |= (cause[:, None] == cause[None]) & (cause[:, None] >= 0)
    same.fill_diagonal_(False)
    ab = (scale * za @ zb.T).masked_fill(same, -1e4)
    own = torch.zeros(len(p.a), zn.shape[0], dtype=torch.bool)
    own[has_neg.nonzero()[:, 0], torch.arange(zn.shape[0])] = True
    an = (scale * za @ zn.T).masked_fill(~own, -1e4)
    target = torch.arange(len(p.a))
    forward = nn.functional.cross_entropy(torch.cat([ab, an], 1), target)
    backward = nn.functional.cross_entropy(ab.T, target)
    return (forward + backward) / 2


def fit_key_head(
    raw: np.ndarray,
    train: PairTable,
    val: PairTable,
    val_candidates: np.ndarray,
    cfg: FitConfig,
    encoder_sha256: str = "",
    reads: RawKeys | None = None,
) -> tuple[KeyHead, dict]:
    """A head trained on frozen raw keys [N, d] (unit rows, pooled as `reads` says: by default the last
    layer's mean), early-stopped on the validation MRR; the report has the raw keys' and the head's
    validation metrics."""
    torch.manual_seed(cfg.seed)
    rng = np.random.default_rng(cfg.seed)
    x = torch.from_numpy(np.asarray(raw, dtype=np.float32))
    reads = reads or RawKeys()
    head = KeyHead(x.shape[1], cfg.dim, encoder_sha256, reads.pooling, cfg.hidden, reads.layer, reads.idf)
    train_rows = np.unique(np.concatenate([train.a, train.b]))
    head.fit_mean(x[torch.from_numpy(train_rows)])
    opt = torch.optim.AdamW(head.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    report = {"raw": rank_metrics(nn.functional.normalize(x, dim=-1), val, val_candidates), "epochs": []}
    best, best_state, stale, t0 = -1.0, None, 0, time.perf_counter()
    for epoch in range(cfg.max_epochs):
        head.train()
        order, losses = rng.permutation(len(train.a)), []
        for start in range(0, len(order), cfg.batch_size):
            loss = _batch_loss(head, x, train.take(order[start : start + cfg.batch_size]))
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        head.eval()
        with torch.no_grad():
            metrics = rank_metrics(head(x), val, val_candidates)
        report["epochs"].append({"epoch": epoch, "loss": round(float(np.mean(losses)), 4), **metrics})
        if metrics["mrr"] > best:
            best, stale = metrics["mrr"], 0
            best_state = {k: v.clone() for k, v in head.state_dict().items()}
        else:
            stale += 1
        if stale >= cfg.patience or (cfg.time_budget_s and time.perf_counter() - t0 > cfg.time_budget_s):
            break
    head.load_state_dict(best_state)
    with torch.no_grad():
        report["head"] = rank_metrics(head(x), val, val_candidates)
    report["train_seconds"] = round(time.perf_counter() - t0, 1)
    return head.eval(), report
