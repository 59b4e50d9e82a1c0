"""The Transformer-XL's recurrence memory as a type (retrieved memory: txl.retrieved).

`Memory` is what a forward call leaves for the next one: per layer the states of the last mem_len
positions, with each slot's block tag, connective mark and visibility, and (without autograd) each
layer's attention keys/values of those slots. B lanes, M memory slots, d = d_model; a layer list holds
n_layer + 1 entries (entry l is the input of layer l, the last the top layer's output) or n_layer (HF's
layout, see txl.convert).

It owns its operations on lanes: select a range of lanes, join them, hide a lane's memory where its
document changes, take one lane's real slots as a compact copy and stack ragged lanes again (the
encoder's steps, retrieval/lanes.py). A compact lane keeps all layers in one tensor, so stacking costs
one copy per lane instead of one per layer; callers see per-layer views either way.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import torch

Tensor = torch.Tensor


@dataclass
class Packing:
    """How a call's rows are laid out. `lengths` [B] long: real tokens per lane, the rest of each row is
    right padding (ragged lanes); the carried memory of each lane then ends at its last real token.
    `seg_starts` [B, T] long: several consecutive segments of a lane in one call; entry t is the
    position (in this call) where token t's segment begins, so each token sees the mem_len tokens before
    its segment and its segment so far, exactly as with one call per segment."""

    lengths: Tensor | None = None
    seg_starts: Tensor | None = None


def stack_rows(parts: Sequence[Tensor | None], w: int, fill, template: Tensor, right: bool) -> Tensor:
    """[1, n_i, ...] tensors (None = no slots) -> [B, w, ...] with `fill` in the free slots, each part
    right-aligned (memory ends at the newest slot) or left-aligned (retrieved slots); one copy each."""
    out = torch.full((len(parts), w, *template.shape[2:]), fill, dtype=template.dtype, device=template.device)
    for b, p in enumerate(parts):
        n = 0 if p is None else p.size(1)
        if n:
            out[b, slice(w - n, w) if right else slice(0, n)] = p[0]
    return out


def stack_labels(
    present: Sequence, get: Callable, dtype: torch.dtype, fill, pad, w: int, right: bool
) -> Tensor:
    """One label per slot of ragged lanes (None = an absent lane) as [B, w]: a lane's own labels (`get`),
    `fill` for a lane that carries none, `pad` on padding slots (on the right or, `right`, the left)."""
    dev = next(p for p in present if p is not None).states[0].device
    vals = [
        None
        if p is None
        else get(p)
        if get(p) is not None
        else torch.full((1, p.width), fill, dtype=dtype, device=dev)
        for p in present
    ]
    return stack_rows(vals, w, pad, torch.zeros(1, 0, dtype=dtype, device=dev), right)


def _fused(layers: list[Tensor]) -> Tensor:
    """n of [1, W, c] -> [1, W, n * c]: the layers side by side in one tensor of the lane's own."""
    return torch.cat(layers, -1)


@dataclass(eq=False)
class Memory:
    """The recurrence memory of B lanes (see the module docstring)."""

    states: list[Tensor]  # n_layer (+ 1) of [B, M, d], detached
    types: Tensor | None = None  # [B, M] long block type ids, -1 = unknown; None = all unknown
    connective: Tensor | None = None  # [B, M] bool connective marks; None = none
    mask: Tensor | None = None  # [B, M] bool, True = visible; None = all visible
    kv: list[Tensor] | None = None  # n_layer of [B, M, 2 * n_head * d_head], made under no_grad only
    # a compact lane (`lane`): its states and kv as [1, M, L * c] tensors whose chunks are `states`, `kv`
    fused: tuple[Tensor, Tensor | None] | None = field(default=None, repr=False, compare=False)

    @property
    def width(self) -> int:
        return self.states[0].size(1)

    @property
    def n_lanes(self) -> int:
        return self.states[0].size(0)

    # -- after a forward call --
    @staticmethod
    def after(
        prev: Memory | None,
        outputs: list[Tensor],
        kv: list[Tensor] | None,
        block_types: Tensor | None,
        connective: Tensor | None,
        mem_len: int,
        lengths: Tensor | None,
    ) -> Memory:
        """The memory for the next call: the previous slots followed by this call's layer outputs
        (`outputs`: n_layer + 1 of [B, T, d]; as many as `prev` holds) and their labels (block types,
        connective marks [B, T]), trimmed to the newest mem_len slots, or with ragged lanes (`lengths`)
        the mem_len slots that end at each lane's last real token. `kv`: n_layer of [B, M + T, c]."""
        b, t = outputs[0].shape[:2]
        m = prev.width if prev is not None else 0
        dev = outputs[0].device
        mem_vis = prev.mask.bool() if prev is not None and prev.mask is not None and m else None
        kept = outputs[: len(prev.states)] if prev is not None else outputs  # n_layer in, n_layer out (HF)
        room = GROW_CALLS * t if kv is not None and lengths is None else 0  # see GROW_CALLS
        if room:  # no autograd here: kv is made under no_grad only
            full = [appended(prev.states[i], h, room) if m else growing(h, room) for i, h in enumerate(kept)]
            kv = [growing(x, room) for x in kv]
        else:
            full = [(torch.cat([prev.states[i], h], 1) if m else h).detach() for i, h in enumerate(kept)]
        if lengths is not None and mem_vis is None:
            mem_vis = torch.ones(b, m, dtype=torch.bool, device=dev)
        vis = torch.cat([mem_vis, mem_vis.new_ones(b, t)], 1) if mem_vis is not None else None  # [B, M+T]
        types = _labels(prev.types if prev is not None else None, block_types, (b, m, t), -1, dev)
        conn = _labels(prev.connective if prev is not None else None, connective, (b, m, t), False, dev)
        take, valid = _window(b, m, t, mem_len, lengths, dev)
        mask = take(vis) if valid is None else take(vis) & valid
        kvs = [take(x) for x in kv] if kv is not None else None
        return Memory([take(f) for f in full], take(types), take(conn), mask, kvs)

    # -- per lane --
    def reset(self, new_doc: Tensor) -> Memory:
        """Hide all memory of the lanes marked True in `new_doc` [B] (a new document starts there): the
        slots are masked, never zero-filled, so such a lane equals a fresh start."""
        keep = ~new_doc.to(self.states[0].device).bool()[:, None].expand(self.n_lanes, self.width)  # [B, M]
        mask = keep if self.mask is None else self.mask.bool() & keep
        return Memory(self.states, self.types, self.connective, mask, self.kv, self.fused)

    def newest(self, max_len: int | None) -> Memory | None:
        """At most the `max_len` newest slots (progressive eviction); None for max_len 0."""
        if max_len == 0:
            return None
        m = self.width
        if max_len is None or max_len >= m:
            return self
        return self.map(lambda x: x[:, m - max_len :])

    def lanes(self, start: int, stop: int) -> Memory:
        return self.map(lambda x: x[start:stop])

    @staticmethod
    def join(parts: Sequence[Memory | None]) -> Memory | None:
        """Lanes side by side (the same width): gradient-accumulation chunks back into one batch."""
        if not parts or parts[0] is None:
            return None

        def cat(get):
            return None if get(parts[0]) is None else torch.cat([get(p) for p in parts], 0)

        n_kv = len(parts[0].kv) if parts[0].kv is not None else 0
        return Memory(
            [torch.cat([p.states[i] for p in parts], 0) for i in range(len(parts[0].states))],
            cat(lambda p: p.types),
            cat(lambda p: p.connective),
            cat(lambda p: p.mask),
            [torch.cat([p.kv[i] for p in parts], 0) for i in range(n_kv)] if n_kv else None,
        )

    def lane(self, b: int, keep: int) -> Memory:
        """Lane b's newest `keep` slots as a compact memory of its own ([1, keep, ...]): a view would keep
        the whole batch's memory alive for as long as the lane lives. Its layers are fused (one copy
        here and one in `stack`, instead of one per layer)."""
        states = _fused([x[b : b + 1, -keep:] for x in self.states])  # [1, W, L * d]
        kv = _fused([x[b : b + 1, -keep:] for x in self.kv]) if self.kv is not None else None  # [1, W, L * c]

        def own(x: Tensor | None) -> Tensor | None:
            return None if x is None else x[b : b + 1, -keep:].clone()

        return Memory(
            list(states.chunk(len(self.states), -1)),
            own(self.types),
            own(self.connective),
            own(self.mask),
            list(kv.chunk(len(self.kv), -1)) if kv is not None else None,
            (states, kv),
        )

    @staticmethod
    def stack(parts: Sequence[Memory | None]) -> Memory | None:
        """Ragged lanes (None = no memory yet) as one batch, each right-aligned and left-padded with
        masked slots to the widest; None when no lane has a slot."""
        present = [p if p is not None and p.width else None for p in parts]
        real = [p for p in present if p is not None]
        if not real:
            return None
        w = max(p.width for p in real)
        first = real[0]
        n_s, n_kv = len(first.states), len(first.kv) if first.kv is not None else 0
        with_kv = n_kv and all(p.kv is not None for p in real)  # a lane without its cache: none at all

        def stacked(get, n: int) -> list[Tensor]:
            # one copy per lane of each [1, W_b, c] part into [B, w, c], then per-layer views of it
            parts_ = [None if p is None else get(p) for p in present]
            return list(stack_rows(parts_, w, 0.0, get(first), True).chunk(n, -1))

        if all(p.fused is not None for p in real):
            states = stacked(lambda p: p.fused[0], n_s)
            kv = stacked(lambda p: p.fused[1], n_kv) if with_kv else None
        else:
            states = [stacked(lambda p, i=i: p.states[i], 1)[0] for i in range(n_s)]
            kv = [stacked(lambda p, i=i: p.kv[i], 1)[0] for i in range(n_kv)] if with_kv else None

        def labels(get, dtype: torch.dtype, pad, own=None) -> Tensor | None:
            # `pad` fills the padding slots, `own` a lane's slots that carry no label (None: no label anywhere)
            if own is None and all(get(p) is None for p in real):
                return None
            return stack_labels(present, get, dtype, pad if own is None else own, pad, w, True)

        return Memory(
            states,
            labels(lambda p: p.types, torch.long, -1),
            labels(lambda p: p.connective, torch.bool, False),
            labels(lambda p: p.mask, torch.bool, False, own=True),
            kv,
        )  # padding always masked

    # -- whole --
    def map(self, fn: Callable[[Tensor], Tensor]) -> Memory:
        """The same memory with `fn` applied to every tensor (lane slices, devices, DDP gathers)."""

        def opt(x):
            return None if x is None else fn(x)

        return Memory(
            [fn(x) for x in self.states],
            opt(self.types),
            opt(self.connective),
            opt(self.mask),
            None if self.kv is None else [fn(x) for x in self.kv],
        )

    def to(self, device: torch.device | str | None = None, dtype: torch.dtype | None = None) -> Memory:
        """Moved to `device`; `dtype` applies to the states and the kv cache only (labels keep theirs)."""
        moved = self.map(lambda x: x.to(device)) if device is not None else self
        if dtype is None:
            return moved
        return Memory(
            [x.to(dtype) for x in moved.states],
            moved.types,
            moved.connective,
            moved.mask,
            None if moved.kv is None else [x.to(dtype) for x in moved.kv],
        )

    def detach(self) -> Memory:
        return self.map(Tensor.detach)

    def nbytes(self) -> int:
        if self.fused is not None:
            tensors = [t for t in self.fused if t is not None]
        else:
            tensors = [*self.states, *(self.kv or [])]
        tensors += [t for t in (self.types, self.connective, self.mask) if t is not None]
        return sum(t.numel() * t.element_size() for t in tensors)

    # -- checkpoints (the keys of the former keyword dict, so older training states resume) --
    def state_dict(self) -> dict:
        return {
            "mems": self.states,
            "mem_types": self.types,
            "mem_connective": self.connective,
            "mem_mask": self.mask,
            "mem_kv": self.kv,
        }

    @staticmethod
    def from_state_dict(state: dict | None) -> Memory | None:
        if not state or state.get("mems") is None:
            return None
        return Memory(
            list(state["mems"]),
            state.get("mem_types"),
            state.get("mem_connective"),
            state.get("mem_mask"),
            state.get("mem_kv"),
        )


def _labels(old: Tensor | None, new: Tensor | None, bmt: tuple[int, int, int], fill, dev) -> Tensor | None:
    """Per-slot labels (types, connective flags) of [memory; current]: [B, M + T]; None if none known."""
    if old is None and new is None:
        return None
    b, m, t = bmt
    dtype = torch.long if fill == -1 else torch.bool
    old = old if old is not None else torch.full((b, m), fill, dtype=dtype, device=dev)
    new = new if new is not None else torch.full((b, t), fill, dtype=dtype, device=dev)
    return torch.cat([old[:, :m].to(dtype), new.to(dtype)], 1)


# Without autograd and without ragged lanes (evaluation's steady state) the memory's states and kv are
# views into buffers with room for this many more calls: each call writes its rows after the used ones
# instead of copying the whole memory into a new tensor (a fifth of a cached 64-token call at mem_len
# 1600 went to those copies), and the rows are copied once the room runs out.
GROW_CALLS = 8
_USED = "ldx_used_rows"  # the attribute of a growing buffer that says how many of its rows are used


def _tail_start(x: Tensor) -> int | None:
    """The row where `x` [B, n, ...] starts in the growing buffer whose used rows it ends; None when it
    ends none (its rows continue past it, or it is no such buffer's view)."""
    base = x._base
    used = getattr(base, _USED, None) if base is not None else None
    if (
        used is None
        or x.stride() != base.stride()
        or x.shape[:1] + x.shape[2:] != base.shape[:1] + base.shape[2:]
    ):
        return None
    start, rest = divmod(x.storage_offset() - base.storage_offset(), base.stride(1))
    return start if rest == 0 and start + x.size(1) == used else None


def _growing(parts: Sequence[Tensor], room: int) -> Tensor:
    """The parts joined along dim 1, copied into a new growing buffer with `room` free rows after them."""
    n = sum(x.size(1) for x in parts)
    last = parts[-1]
    buf = last.new_empty((last.size(0), n + room, *last.shape[2:]))
    at = 0
    for x in parts:
        buf[:, at : at + x.size(1)] = x
        at += x.size(1)
    setattr(buf, _USED, n)
    return buf[:, :n]


def appended(prev: Tensor, new: Tensor, room: int = 0) -> Tensor:
    """`torch.cat([prev, new], 1)` ([B, M, ...] then [B, T, ...], in new's dtype) of tensors without
    autograd. Where `prev` ends the used rows of a growing buffer that has room for `new`, `new` is
    written after them in place and a view returned: every view of the buffer that exists ends at or
    before its used rows, so no memory of an earlier call changes. Otherwise the rows are copied, into a
    new growing buffer with `room` free rows (room 0: a plain cat)."""
    start = None if torch.is_grad_enabled() else _tail_start(prev)
    base = prev._base
    if start is not None and base.dtype == new.dtype and getattr(base, _USED) + new.size(1) <= base.size(1):
        used = getattr(base, _USED)
        base[:, used : used + new.size(1)] = new
        setattr(base, _USED, used + new.size(1))
        return base[:, start : used + new.size(1)]
    if room > 0 and not torch.is_grad_enabled():
        return _growing([prev.to(new.dtype), new], room)
    return torch.cat([prev.to(new.dtype), new], 1)


def cached_kv(new: Tensor, mem_kv: Tensor, n_r: int) -> Tensor:
    """The keys/values of [retrieved; memory; current] of a call whose memory came with its own: `new`
    [B, n_r + T, c] those the call projected (retrieved, then current), `mem_kv` [B, M, c] the memory's.
    Without retrieved slots the current rows are `appended` to the memory's (in place where they can be)."""
    if not n_r:
        return appended(mem_kv, new)
    return torch.cat([new[:, :n_r], mem_kv.to(new.dtype), new[:, n_r:]], 1)


def growing(x: Tensor, room: int) -> Tensor:
    """`x` itself where it ends a growing buffer's used rows, else a copy of it in a new one."""
    return x if _tail_start(x) is not None else _growing([x], room)


def _window(b: int, m: int, t: int, mem_len: int, lengths: Tensor | None, dev: torch.device):
    """(take, valid): `take` maps [B, M + T, ...] to the next memory [B, W, ...] — the newest W =
    min(mem_len, M + T) slots, or with ragged lanes the W slots that end at each lane's last real
    token; `valid` [B, W] is False where such a window reaches left of slot 0 (None without lengths)."""
    w = min(mem_len, m + t)
    if lengths is None:
        return (lambda x: None if x is None else x[:, m + t - w :]), None
    pos = (m + lengths.to(dev).long())[:, None] - w + torch.arange(w, device=dev)  # [B, W]
    valid = pos >= 0
    rows = (pos.clamp(min=0) + torch.arange(b, device=dev)[:, None] * (m + t)).view(-1)  # [B * W]

    def take(x: Tensor | None) -> Tensor | None:
        # whole rows of the flattened [B * (M + T), ...]: row copies, not a per-element gather
        if x is None:
            return None
        return x.reshape(b * (m + t), *x.shape[2:]).index_select(0, rows).view(b, w, *x.shape[2:])

    return take, valid
