"""Adam with a cosine learning-rate schedule, in torch's multi-tensor ops, outside ``torch.optim``.

Why not ``torch.optim.Adam``: every ``torch.optim`` optimizer imports torch's compiler stack
(``torch._dynamo``) the first time it is built or stepped, 1.1-1.4 s on an idle 2-core machine and
over 10 s on a loaded one, in every process's first fit. That is more than AutoETS takes to
forecast a small panel. The update here is Adam's (Kingma and Ba, 2015, with bias correction,
as ``torch.optim.Adam`` computes it without weight decay or AMSGrad), one multi-tensor kernel per
operation over all parameters, as torch's ``foreach`` implementation runs it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import torch


class Adam:
    """Adam over ``parameters`` with a learning rate set by the caller at each step (``set_learning_rate``).

    ``scales``: per parameter (in the order given), None or a tensor of its shape that multiplies its learning
    rate element by element (a fit from the prior moves the prior's weights a hundred times slower than the
    weights of covariates it never saw).
    """

    def __init__(
        self,
        parameters: Iterable[torch.nn.Parameter],
        learning_rate: float,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        scales: list[torch.Tensor | None] | None = None,
    ) -> None:
        given = list(parameters)
        scales = [None] * len(given) if scales is None else list(scales)
        if len(scales) != len(given):
            raise ValueError(f"`scales` has {len(scales)} entries for {len(given)} parameters.")
        kept = [i for i, p in enumerate(given) if p.requires_grad]
        self.parameters = [given[i] for i in kept]
        self.scales = [None if scales[i] is None else scales[i].to(given[i].device, given[i].dtype) for i in kept]
        self.learning_rate = float(learning_rate)
        self.betas = betas
        self.eps = eps
        self.steps = 0
        self.first = [torch.zeros_like(p, memory_format=torch.preserve_format) for p in self.parameters]
        self.second = [torch.zeros_like(p, memory_format=torch.preserve_format) for p in self.parameters]

    def zero_grad(self) -> None:
        for p in self.parameters:
            p.grad = None

    def set_learning_rate(self, learning_rate: float) -> None:
        self.learning_rate = float(learning_rate)

    @torch.no_grad()
    def step(self) -> None:
        """One Adam update of every parameter that has a gradient."""
        live = [i for i, p in enumerate(self.parameters) if p.grad is not None]
        if not live:
            return
        params = [self.parameters[i] for i in live]
        grads = [self.parameters[i].grad for i in live]
        first = [self.first[i] for i in live]
        second = [self.second[i] for i in live]
        beta1, beta2 = self.betas
        self.steps += 1
        torch._foreach_lerp_(first, grads, 1.0 - beta1)  # m <- beta1 m + (1 - beta1) g
        torch._foreach_mul_(second, beta2)
        torch._foreach_addcmul_(second, grads, grads, 1.0 - beta2)  # v <- beta2 v + (1 - beta2) g^2
        step_size = self.learning_rate / (1.0 - beta1**self.steps)
        denominator = torch._foreach_sqrt(second)
        torch._foreach_div_(denominator, math.sqrt(1.0 - beta2**self.steps))
        torch._foreach_add_(denominator, self.eps)
        for slot, i in enumerate(live):  # a handful of scaled parameters at most
            if self.scales[i] is not None:
                denominator[slot].div_(self.scales[i])
        torch._foreach_addcdiv_(params, first, denominator, -step_size)


def cosine_learning_rate(base: float, step: int, total: int) -> float:
    """The learning rate after ``step`` of ``total`` steps: a half cosine from ``base`` down to 5% of it."""
    return base * (0.5 * (1.0 + math.cos(math.pi * min(step, total) / total)) * 0.95 + 0.05)
