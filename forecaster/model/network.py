"""The sequence-to-sequence network. It knows tensors only: no pandas, no column names, no scaling."""

from __future__ import annotations

from dataclasses import asdict, dataclass

import torch
from torch import nn
from torch.nn import functional as F

from .attention import make_attention, masked_softmax


@dataclass(frozen=True)
class NetworkConfig:
    """Shapes and sizes of the network (JSON-friendly)."""

    input_size: int
    horizon: int
    past_features: int  # past covariates + calendar per history step
    future_features: int  # future-known covariates + calendar per horizon step
    static_features: int
    n_outputs: int  # number of quantiles (1 for a point forecast)
    median_index: int = 0  # which output is the median (the level the others are offset from)
    hidden_size: int = 64
    num_layers: int = 1
    dropout: float = 0.1
    cell: str = "gru"
    attention: str = "dot"
    skip: bool = False  # add a linear map from the scaled history to the horizon

    def to_dict(self) -> dict:
        return asdict(self)


class Seq2SeqNetwork(nn.Module):
    """Bidirectional recurrent encoder, attention, and a direct multi-horizon decoder.

    All horizon steps are decoded in one pass: step ``h`` forms its own query from a
    step embedding, its future-known covariates, the static features and a summary of
    the encoder, and attends over every encoder state. Scores get a learned bias per
    distance between the target period and the attended period, and each value
    carries the scaled observation at its position, so "look one season back from the
    target" is easy to learn and shows up in the attention maps.
    """

    def __init__(self, config: NetworkConfig):
        super().__init__()
        self.config = config
        d = config.hidden_size
        self.input_proj = nn.Linear(2 + config.past_features + config.static_features, d)
        self.encoder = BidirectionalEncoder(d, config.num_layers, config.cell, config.dropout)
        self.state_proj = nn.Linear(2 * d, d)
        self.value = nn.Linear(d + 2, d)  # encoder state + the scaled value and its observed flag
        # Learned bias per distance between target period and attended period, so a step
        # can look "one season back from its own target" directly (as T5's relative bias).
        self.distance_bias = nn.Parameter(torch.zeros(config.input_size + config.horizon))
        self.summary = nn.Linear(2 * d, d)
        self.step_embedding = nn.Embedding(config.horizon, d)
        self.query = nn.Sequential(
            nn.Linear(2 * d + config.future_features + config.static_features, d), nn.GELU(), nn.Linear(d, d)
        )
        self.attention = make_attention(config.attention, d)
        self.dropout = nn.Dropout(config.dropout)
        self.head = nn.Sequential(nn.Linear(2 * d, d), nn.GELU(), nn.Linear(d, config.n_outputs))
        self.skip = nn.Linear(config.input_size, config.horizon) if config.skip else None
        if self.skip is not None:
            nn.init.zeros_(self.skip.weight)
            nn.init.zeros_(self.skip.bias)
        lag = torch.arange(config.input_size - 1, -1, -1)  # lag of each history position from the origin
        step = torch.arange(1, config.horizon + 1)
        self.register_buffer("distance", (step[:, None] + lag[None, :]) - 1, persistent=False)  # (H, T)

    def forward(
        self,
        past_target: torch.Tensor,  # (B, T) scaled target, 0 where missing/padded
        past_observed: torch.Tensor,  # (B, T) 1.0 where observed
        past_padded: torch.Tensor,  # (B, T) bool, True before the series starts
        past_covariates: torch.Tensor,  # (B, T, Cp)
        future_known: torch.Tensor,  # (B, H, Cf)
        static: torch.Tensor,  # (B, S)
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Return quantiles of the scaled target (B, H, Q) and attention weights (B, H, T)."""
        batch, steps = past_target.shape
        past_target = past_target.masked_fill(past_padded, 0.0)
        horizon = self.config.horizon
        static_t = static[:, None, :].expand(batch, steps, static.shape[1])
        inputs = torch.cat([past_target[..., None], past_observed[..., None], past_covariates, static_t], dim=-1)
        states = self.encoder(self.dropout(F.gelu(self.input_proj(inputs))), past_padded)  # (B, T, 2d)
        valid = (~past_padded).float()[..., None]
        summary = self.summary((states * valid).sum(1) / valid.sum(1).clamp(min=1.0))  # (B, d)
        memory = self.state_proj(states)  # (B, T, d)
        keys = self.attention.project_keys(memory)  # once per source, shared by all steps
        values = self.value(torch.cat([memory, past_target[..., None], past_observed[..., None]], dim=-1))

        steps_emb = self.step_embedding.weight[None].expand(batch, horizon, -1)
        query_in = torch.cat(
            [
                steps_emb,
                summary[:, None, :].expand(batch, horizon, -1),
                future_known,
                static[:, None, :].expand(batch, horizon, static.shape[1]),
            ],
            dim=-1,
        )
        queries = self.query(query_in)  # (B, H, d)
        scores = self.attention.scores(queries, keys) + self.distance_bias[self.distance][None]
        weights = masked_softmax(scores, past_padded)  # (B, H, T)
        context = torch.matmul(weights, values)  # (B, H, d)
        raw = self.head(self.dropout(torch.cat([context, queries], dim=-1)))  # (B, H, Q)
        level = raw[..., :1]
        if self.skip is not None:
            level = level + self.skip(past_target)[..., None]
        return _monotone(level, raw[..., 1:], self.config.median_index), weights


class BidirectionalEncoder(nn.Module):
    """Bidirectional GRU/LSTM over left-padded sequences that padding cannot reach.

    Each direction is its own unidirectional RNN arranged so it meets the padding
    only *after* the real steps: the forward RNN reads the sequence shifted to the
    left (padding moved to the end), the backward RNN reads it time-reversed (the
    padding prefix becomes a suffix). So adding padding never changes a state, and
    both run as plain dense RNNs (packed sequences are several times slower on CPU).
    """

    def __init__(self, size: int, num_layers: int, cell: str, dropout: float):
        super().__init__()
        rnn = {"gru": nn.GRU, "lstm": nn.LSTM}[cell]
        self.forward_layers = nn.ModuleList(rnn(size if i == 0 else 2 * size, size, batch_first=True) for i in range(num_layers))
        self.backward_layers = nn.ModuleList(rnn(size if i == 0 else 2 * size, size, batch_first=True) for i in range(num_layers))
        self.dropout = nn.Dropout(dropout)

    def forward(self, inputs: torch.Tensor, padded: torch.Tensor) -> torch.Tensor:
        """Encoder states (B, T, 2 * size); padded positions come out as zeros."""
        batch, steps, _ = inputs.shape
        shift = padded.sum(dim=1)[:, None]  # padding is a prefix of this length
        positions = torch.arange(steps, device=inputs.device)[None, :]
        to_left = (positions + shift).clamp(max=steps - 1)
        from_left = (positions - shift).clamp(min=0)
        valid = (~padded)[..., None].to(inputs.dtype)
        x = inputs
        for i, (fwd, bwd) in enumerate(zip(self.forward_layers, self.backward_layers, strict=False)):
            if i:
                x = self.dropout(x)
            left = torch.gather(x, 1, to_left[..., None].expand(-1, -1, x.shape[2]))
            out_f = fwd(left)[0]
            out_f = torch.gather(out_f, 1, from_left[..., None].expand(-1, -1, out_f.shape[2]))
            out_b = torch.flip(bwd(torch.flip(x, dims=[1]))[0], dims=[1])
            x = torch.cat([out_f, out_b], dim=-1) * valid
        return x


def _monotone(level: torch.Tensor, spreads: torch.Tensor, below: int) -> torch.Tensor:
    """Quantiles that never cross: the median is the level, others are cumulative softplus offsets."""
    if spreads.shape[-1] == 0:
        return level
    lower = level - torch.flip(torch.cumsum(F.softplus(spreads[..., :below]), dim=-1), dims=[-1])
    upper = level + torch.cumsum(F.softplus(spreads[..., below:]), dim=-1)
    return torch.cat([lower, level, upper], dim=-1)


class Ensemble(nn.Module):
    """Several members of one architecture; forecasts are the member median, attention the member mean.

    The median of monotone quantile vectors is monotone, and the mean of attention
    rows still sums to one with zero weight on padding.
    """

    def __init__(self, config: NetworkConfig, n_models: int):
        super().__init__()
        self.config = config
        self.members = nn.ModuleList(Seq2SeqNetwork(config) for _ in range(n_models))

    def forward(self, **inputs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        outputs, weights = zip(*(member(**inputs) for member in self.members), strict=True)
        if len(outputs) == 1:
            return outputs[0], weights[0]
        return torch.quantile(torch.stack(outputs), 0.5, dim=0), torch.stack(weights).mean(dim=0)
