"""The sequence-to-sequence network. It knows tensors only: no pandas, no column names, no scaling."""

from __future__ import annotations

from dataclasses import asdict, dataclass

import torch
from torch import nn
from torch.nn import functional as F

from .attention import make_attention, masked_softmax

# Windows per gradient pass of ``head_gradient`` (its graph is kept for one backward pass per horizon step).
GRADIENT_CHUNK = 512


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
    # "states": attention averages value vectors of the encoder states and a head reads the context (the design
    # before faithful attention). "observations": the median is the attention-weighted average of the attended
    # observations themselves, each moved to the target by the long-run seasonal profile and trend line, plus an
    # effect of the step, future-known covariates and statics that reads no history; weight x value is then
    # exactly each history point's share of the forecast.
    values: str = "states"
    seasonal_channels: int = 0  # decomposition channels at the end of past_features / future_features
    trend_channels: int = 0
    future_covariates: int = 0  # future-known covariate channels at the start of future_features

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
        if config.values == "observations":
            adjustments = config.seasonal_channels + config.trend_channels
            # Gains of the seasonal (additive, multiplicative) and trend adjustments that move an observation to the target.
            self.adjustment_gain = nn.Parameter(torch.ones(adjustments))
            # Reads the step, future-known covariates, calendar and statics, never the history: the decoder's
            # decomposition channels (functions of the history) are left out.
            self.direct = nn.Sequential(
                nn.Linear(d + config.future_features - adjustments + config.static_features, d), nn.GELU(), nn.Linear(d, 1)
            )
            nn.init.zeros_(self.direct[-1].weight)
            nn.init.zeros_(self.direct[-1].bias)
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
        quantiles, weights, _ = self.run(past_target, past_observed, past_padded, past_covariates, future_known, static)
        return quantiles, weights

    def run(
        self,
        past_target: torch.Tensor,
        past_observed: torch.Tensor,
        past_padded: torch.Tensor,
        past_covariates: torch.Tensor,
        future_known: torch.Tensor,
        static: torch.Tensor,
        with_parts: bool = False,
        shares: bool = False,
    ) -> tuple[torch.Tensor, torch.Tensor, dict[str, torch.Tensor] | None]:
        """Quantiles, attention and, with ``with_parts``, the median's parts (scaled units).

        ``values="observations"``: see :meth:`median_parts`. ``values="states"``: ``network`` (B, H),
        the head's median with the future-known covariates at their training mean; ``covariates`` (B, H),
        the head's median minus that (a second decoder pass, only with future-known covariates);
        ``skip`` (B, H, T) the linear skip's exact term per history point and ``baseline`` (B, H) its bias.
        With ``shares`` too, ``gradient`` (B, H, T): the gradient of the median at the covariates' mean by each
        scaled history value (:meth:`head_gradient` plus the skip's weights), from which the account splits the
        forecast over the history points. Call it outside ``torch.inference_mode`` then.
        """
        past_target = past_target.masked_fill(past_padded, 0.0)
        memory = self.encode(past_target, past_observed, past_padded, past_covariates, static)
        observations = self.config.values == "observations"
        hidden = past_padded | (past_observed == 0) if observations else past_padded
        raw, weights = self.decode(memory, hidden, future_known, static)
        parts = None
        if observations:
            parts = self.median_parts(weights, past_target, past_covariates, future_known, static, with_parts)
            level = (parts["observations"] + parts["adjustments"]).sum(-1, keepdim=True) + parts["direct"][..., None]
        else:
            level = raw[..., :1]
            if with_parts:
                parts = self.head_parts(raw, memory, hidden, future_known, static, past_target)
                if shares:
                    known = _at_mean(future_known, self.config.future_covariates)
                    inputs = (past_target, past_observed, past_padded, past_covariates, known, static)
                    parts["gradient"] = self.head_gradient(*inputs)
        if self.skip is not None:
            level = level + self.skip(past_target)[..., None]
            if parts is not None and with_parts:
                parts["skip"] = self.skip.weight[None] * past_target[:, None, :]
                parts["baseline"] = parts["baseline"] + self.skip.bias[None]
                if "gradient" in parts:  # the median's gradient: the head's and the skip's weights
                    parts["gradient"] = parts["gradient"] + self.skip.weight[None]
        return _monotone(level, raw[..., 1:], self.config.median_index), weights, parts

    def encode(self, past_target, past_observed, past_padded, past_covariates, static) -> tuple[torch.Tensor, ...]:
        """What every horizon step reads from the history: the encoder summary, keys and values (computed once)."""
        steps = past_target.shape[1]
        static_t = static[:, None, :].expand(static.shape[0], steps, static.shape[1])
        inputs = torch.cat([past_target[..., None], past_observed[..., None], past_covariates, static_t], dim=-1)
        states = self.encoder(self.dropout(F.gelu(self.input_proj(inputs))), past_padded)  # (B, T, 2d)
        valid = (~past_padded).float()[..., None]
        summary = self.summary((states * valid).sum(1) / valid.sum(1).clamp(min=1.0))  # (B, d)
        memory = self.state_proj(states)  # (B, T, d)
        keys = self.attention.project_keys(memory)  # once per source, shared by all steps
        values = self.value(torch.cat([memory, past_target[..., None], past_observed[..., None]], dim=-1))
        return summary, keys, values

    def decode(
        self, memory: tuple[torch.Tensor, ...], hidden: torch.Tensor, future_known: torch.Tensor, static: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Every horizon step at once: the head's raw outputs (B, H, Q) and the attention weights (B, H, T)."""
        summary, keys, values = memory
        batch, horizon = summary.shape[0], self.config.horizon
        query_in = torch.cat(
            [
                self.step_embedding.weight[None].expand(batch, horizon, -1),
                summary[:, None, :].expand(batch, horizon, -1),
                future_known,
                static[:, None, :].expand(batch, horizon, static.shape[1]),
            ],
            dim=-1,
        )
        queries = self.query(query_in)  # (B, H, d)
        scores = self.attention.scores(queries, keys) + self.distance_bias[self.distance][None]
        weights = masked_softmax(scores, hidden)  # (B, H, T)
        context = torch.matmul(weights, values)  # (B, H, d)
        return self.head(self.dropout(torch.cat([context, queries], dim=-1))), weights

    def head_parts(self, raw, memory, hidden, future_known, static, past_target) -> dict[str, torch.Tensor]:
        """The median of ``values="states"`` in parts: the head at the covariates' mean, and the covariates' effect."""
        head = raw[..., 0]
        at_mean = head
        if self.config.future_covariates:
            at_mean = self.decode(memory, hidden, _at_mean(future_known, self.config.future_covariates), static)[0][..., 0]
        return {
            "network": at_mean,
            "covariates": head - at_mean,
            "baseline": torch.zeros_like(head),
            "skip": torch.zeros(*head.shape, past_target.shape[1], dtype=head.dtype, device=head.device),
        }

    def head_median(self, past_target, past_observed, past_padded, past_covariates, future_known, static) -> torch.Tensor:
        """The head's median (B, H), scaled units, without skip (``values="states"``)."""
        memory = self.encode(past_target, past_observed, past_padded, past_covariates, static)
        return self.decode(memory, past_padded, future_known, static)[0][..., 0]

    def head_gradient(self, past_target, past_observed, past_padded, past_covariates, future_known, static) -> torch.Tensor:
        """(B, H, T) the gradient of the head's median at each horizon step by each scaled history value.

        Everything else (observed flags, past covariates, calendar, statics, ``future_known``) is held as given.
        One forward pass per chunk of windows, then one backward pass per horizon step over the whole chunk.
        """
        past_target = past_target.masked_fill(past_padded, 0.0)
        inputs = (past_observed, past_padded, past_covariates, future_known, static)
        chunks = []
        for start in range(0, past_target.shape[0], GRADIENT_CHUNK):
            part = slice(start, start + GRADIENT_CHUNK)
            with torch.enable_grad():
                window = past_target[part].detach().requires_grad_(True)
                head = self.head_median(window, *(t[part] for t in inputs))  # (b, H)
                last = head.shape[1] - 1
                grads = [torch.autograd.grad(head[:, h].sum(), window, retain_graph=h < last)[0] for h in range(last + 1)]
            chunks.append(torch.stack(grads, dim=1))
        return torch.cat(chunks)

    def median_parts(
        self,
        weights: torch.Tensor,
        past_target: torch.Tensor,
        past_covariates: torch.Tensor,
        future_known: torch.Tensor,
        static: torch.Tensor,
        split_direct: bool = False,
    ) -> dict[str, torch.Tensor]:
        """The median of ``values="observations"`` in parts that add up to it (scaled units).

        ``observations`` (B, H, T): weight x attended observation; ``adjustments`` (B, H, T): weight x
        the seasonal and trend adjustment that moves that observation to the target; ``direct``
        (B, H): the effect of the step, calendar, future-known covariates and statics, which reads no
        history. With ``split_direct``, ``direct`` is also split exactly into ``baseline`` (the same
        with the future-known covariates at their training mean) and ``covariates`` (the rest).
        """
        batch, horizon = weights.shape[0], self.config.horizon
        observations = weights * past_target[:, None, :]
        k = self.config.seasonal_channels + self.config.trend_channels
        if k:
            delta = future_known[:, :, None, -k:] - past_covariates[:, None, :, -k:]  # (B, H, T, k)
            adjustments = weights * (delta * self.adjustment_gain).sum(-1)
        else:
            adjustments = torch.zeros_like(observations)
        steps = self.step_embedding.weight[None].expand(batch, horizon, -1)
        known = future_known[..., : future_known.shape[-1] - k]
        statics = static[:, None, :].expand(batch, horizon, static.shape[1])
        direct = self.direct(torch.cat([steps, known, statics], dim=-1))[..., 0]
        parts = {"observations": observations, "adjustments": adjustments, "direct": direct}
        if split_direct:
            at_mean = known.clone()
            at_mean[..., : self.config.future_covariates] = 0.0  # standardised covariates at their training mean
            baseline = self.direct(torch.cat([steps, at_mean, statics], dim=-1))[..., 0]
            parts.update(baseline=baseline, covariates=direct - baseline, skip=torch.zeros_like(observations))
        return parts


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


def _at_mean(future_known: torch.Tensor, covariates: int) -> torch.Tensor:
    """``future_known`` with its first ``covariates`` channels (standardised covariates) at their training mean, 0."""
    if not covariates:
        return future_known
    known = future_known.clone()
    known[..., :covariates] = 0.0
    return known


def _monotone(level: torch.Tensor, spreads: torch.Tensor, below: int) -> torch.Tensor:
    """Quantiles that never cross: the median is the level, others are cumulative softplus offsets."""
    if spreads.shape[-1] == 0:
        return level
    lower = level - torch.flip(torch.cumsum(F.softplus(spreads[..., :below]), dim=-1), dims=[-1])
    upper = level + torch.cumsum(F.softplus(spreads[..., below:]), dim=-1)
    return torch.cat([lower, level, upper], dim=-1)


class Ensemble(nn.Module):
    """Several members of one architecture; attention is the member mean.

    Forecasts are the member median (``values="states"``; the median of monotone quantile
    vectors is monotone) or, with ``values="observations"``, the member mean, so that the
    members' parts average into parts of the forecast and each point's share stays weight x
    value with the mean weight shown. The mean of attention rows still sums to one with zero
    weight on padding.
    """

    def __init__(self, config: NetworkConfig, n_models: int):
        super().__init__()
        self.config = config
        self.members = nn.ModuleList(Seq2SeqNetwork(config) for _ in range(n_models))

    def forward(self, **inputs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        quantiles, weights, _ = self.run(**inputs)
        return quantiles, weights

    def run(self, with_parts: bool = False, shares: bool = False, **inputs: torch.Tensor):
        """Quantiles, attention and (``with_parts``) the median's parts, over members (member mean or median)."""
        runs = (member.run(**inputs, with_parts=with_parts, shares=shares) for member in self.members)
        outputs, weights, parts = zip(*runs, strict=True)
        if len(outputs) == 1:
            return outputs[0], weights[0], parts[0]
        if self.config.values != "observations":
            stacked = torch.stack(outputs)
            levels = stacked[..., self.config.median_index]
            median_parts = _median_member_parts(levels, parts, bool(self.config.future_covariates)) if parts[0] else None
            return torch.quantile(stacked, 0.5, dim=0), torch.stack(weights).mean(dim=0), median_parts
        mean_parts = {name: torch.stack([p[name] for p in parts]).mean(dim=0) for name in parts[0]} if parts[0] else None
        return torch.stack(outputs).mean(dim=0), torch.stack(weights).mean(dim=0), mean_parts


def _median_member_parts(
    levels: torch.Tensor, parts: tuple[dict[str, torch.Tensor], ...], covariates: bool
) -> dict[str, torch.Tensor]:
    """The parts of the member median (``values="states"``), exact for the ensemble.

    ``levels`` (M, B, H) are the members' medians. Per (window, step), the members are ranked by their median
    with the future-known covariates at their training mean; the middle member (the mean of the two middle
    ones with an even count, as ``torch.quantile``) gives the head, skip and bias parts, so that they add up to
    the ensemble's median at the covariates' mean (and, where computed, its ``gradient``).
    ``covariates`` is then the ensemble's median as given minus that: the covariates' effect on the ensemble's
    forecast, not on one member's (0 without ``covariates``).
    """
    count = levels.shape[0]
    stacked = {name: torch.stack([p[name] for p in parts]) for name in parts[0]}  # (M, B, H[, T])
    at_mean = stacked["network"] + stacked["skip"].sum(-1) + stacked["baseline"]  # (M, B, H)
    order = torch.argsort(at_mean, dim=0)
    middle = [order[(count - 1) // 2], order[count // 2]]
    chosen = {}
    for name in ("network", "skip", "baseline", "gradient"):
        if name not in stacked:
            continue
        picked = []
        for index in middle:
            index = index[None]
            if stacked[name].dim() == 4:
                index = index[..., None].expand(1, *stacked[name].shape[1:])
            picked.append(torch.gather(stacked[name], 0, index)[0])
        chosen[name] = (picked[0] + picked[1]) / 2
    chosen["covariates"] = torch.zeros_like(chosen["baseline"])
    if covariates:  # without future-known covariates the effect is exactly 0, not float rounding
        chosen["covariates"] = torch.quantile(levels, 0.5, dim=0) - torch.quantile(at_mean, 0.5, dim=0)
    return chosen
