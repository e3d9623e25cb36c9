"""Attention of every horizon step over all encoder states, with padding masked before the softmax."""

from __future__ import annotations

import math

import torch
from torch import nn


def masked_softmax(scores: torch.Tensor, padded: torch.Tensor) -> torch.Tensor:
    """Softmax over the last axis of ``scores`` (B, H, T) ignoring ``padded`` (B, T) positions.

    The mask goes in *before* the softmax (scores set to -inf) so padded positions get
    exactly zero weight and the rest still sum to one; masking afterwards would leave
    weights that no longer sum to one. A row with every position padded would be all
    -inf (NaN after softmax); it gets zero weight everywhere instead.
    """
    mask = padded[:, None, :]
    all_padded = padded.all(dim=1)[:, None, None]
    scores = scores.masked_fill(mask & ~all_padded, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights.masked_fill(all_padded, 0.0)


class DotProductAttention(nn.Module):
    """Scaled dot-product attention: ``softmax(q k^T / sqrt(d)) v`` as one batched matmul."""

    def __init__(self, dim: int):
        super().__init__()
        self.key = nn.Linear(dim, dim, bias=False)
        self.scale = 1.0 / math.sqrt(dim)

    def project_keys(self, states: torch.Tensor) -> torch.Tensor:
        """Keys for all encoder states (B, T, d), computed once per source."""
        return self.key(states)

    def scores(self, queries: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
        return torch.matmul(queries, keys.transpose(1, 2)) * self.scale  # (B, H, T)


class AdditiveAttention(nn.Module):
    """Additive (Bahdanau) attention: ``v^T tanh(W_q q + W_k k)``.

    ``W_k k`` is computed once per source sequence and broadcast over the horizon
    steps, instead of once per step as in a recursive decoder.
    """

    def __init__(self, dim: int):
        super().__init__()
        self.key = nn.Linear(dim, dim, bias=False)
        self.query = nn.Linear(dim, dim, bias=True)
        self.energy = nn.Linear(dim, 1, bias=False)

    def project_keys(self, states: torch.Tensor) -> torch.Tensor:
        return self.key(states)

    def scores(self, queries: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
        hidden = torch.tanh(self.query(queries)[:, :, None, :] + keys[:, None, :, :])  # (B, H, T, d)
        return self.energy(hidden).squeeze(-1)


ATTENTIONS = {"dot": DotProductAttention, "additive": AdditiveAttention}


def make_attention(kind: str, dim: int) -> nn.Module:
    if kind not in ATTENTIONS:
        raise ValueError(f"`attention` must be one of {tuple(ATTENTIONS)}; got {kind!r}.")
    return ATTENTIONS[kind](dim)
