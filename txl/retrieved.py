"""Retrieved memory: states of distant segments, fetched by retrieval, that a call's queries see as
extra slots beside the recurrence memory (txl.memory); the layout of Memory.states, or only the layers
that read them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import Tensor

from txl.memory import stack_labels, stack_rows


def layer_indices(spec: Sequence[int], n_layer: int) -> tuple[int, ...]:
    """Layer numbers (negative: counted from the top) as indices of a model of `n_layer` layers, ascending."""
    out = tuple(sorted({i % n_layer for i in spec if -n_layer <= i < n_layer}))
    if not out or len(out) != len(set(spec)):
        raise ValueError(f"layers {list(spec)} do not fit a model of {n_layer} layers")
    return out


@dataclass(eq=False)
class Retrieved:
    """Extra slots the queries of some layers see, placed at one far relative distance (txl.model).
    With `layers` None entry l of `states` is the input of layer l, the layout of Memory.states, so
    stored memory of another segment can be passed; else entry j is read by layer `layers[j]` alone and
    the other layers do not see the slots (a store then keeps only the layers that read them)."""

    states: list[Tensor]  # n_layer (+ 1) of [B, R, d], or one per entry of `layers`
    types: Tensor | None = None  # [B|1, R] long block type ids, -1 = unknown
    mask: Tensor | None = None  # [B|1, R] bool, False = padding slot; None = all real
    layers: tuple[int, ...] | None = None

    def at(self, layer: int) -> Tensor | None:
        """The slots layer `layer` reads [B, R, d], None if it reads none."""
        if self.layers is None:
            return self.states[layer]
        return self.states[self.layers.index(layer)] if layer in self.layers else None

    @property
    def width(self) -> int:
        return self.states[0].size(1)

    def check(self, n_layer: int) -> None:
        """ValueError unless the states fit a model of `n_layer` layers."""
        if self.layers is None and len(self.states) < n_layer:
            raise ValueError(f"retrieved must hold n_layer (+1) = {n_layer} states, got {len(self.states)}")
        if self.layers is not None and (
            len(self.layers) != len(self.states) or not set(self.layers) <= set(range(n_layer))
        ):
            raise ValueError(f"retrieved layers {self.layers} do not fit {len(self.states)} states")

    def n_real(self) -> int:
        return int(self.mask.sum()) if self.mask is not None else self.states[0].size(0) * self.width

    def to(self, device: torch.device | str | None = None, dtype: torch.dtype | None = None) -> Retrieved:
        def move(x: Tensor) -> Tensor:
            x = x.to(device) if device is not None else x
            return x.to(dtype) if dtype is not None else x

        return Retrieved(
            [move(x) for x in self.states],
            None if self.types is None or device is None else self.types.to(device),
            None if self.mask is None or device is None else self.mask.to(device),
            self.layers,
        )

    @staticmethod
    def stack(parts: Sequence[Retrieved | None]) -> Retrieved | None:
        """One lane each (None = nothing retrieved) as one batch, left-aligned and padded on the right
        with masked slots to the widest; None when no lane has a slot."""
        present = [p if p is not None and p.width else None for p in parts]
        real = [p for p in present if p is not None]
        if not real:
            return None
        r = max(p.width for p in real)
        first = real[0]
        if any(p.layers != first.layers for p in real):
            raise ValueError("lanes' retrieved slots feed different layers")
        states = [
            stack_rows([None if p is None else p.states[i] for p in present], r, 0.0, first.states[i], False)
            for i in range(len(first.states))
        ]

        return Retrieved(
            states,
            stack_labels(present, lambda p: p.types, torch.long, -1, -1, r, False),
            stack_labels(present, lambda p: p.mask, torch.bool, True, False, r, False),
            first.layers,
        )
