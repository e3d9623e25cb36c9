"""Network-level invariants: padding is masked before the softmax and never enters the encoder."""

import numpy as np
import torch
from conftest import fast_model

from forecaster.model.attention import AdditiveAttention, DotProductAttention, masked_softmax
from forecaster.model.network import NetworkConfig, Seq2SeqNetwork


def _inputs(batch=4, steps=24, horizon=6, seed=0):
    g = torch.Generator().manual_seed(seed)
    padded = torch.zeros(batch, steps, dtype=torch.bool)
    padded[0, :14] = True
    padded[2, :20] = True
    return dict(
        past_target=torch.randn(batch, steps, generator=g),
        past_observed=torch.ones(batch, steps),
        past_padded=padded,
        past_covariates=torch.randn(batch, steps, 2, generator=g),
        future_known=torch.randn(batch, horizon, 2, generator=g),
        static=torch.randn(batch, 1, generator=g),
    )


def _network(attention="dot"):
    torch.manual_seed(0)
    config = NetworkConfig(24, 6, 2, 2, 1, 3, median_index=1, dropout=0.0, attention=attention, skip=True)
    network = Seq2SeqNetwork(config).eval()
    torch.nn.init.normal_(network.skip.weight)  # a trained skip reads every history position
    return network


def test_values_in_padded_positions_do_not_change_forecasts():
    for attention in ("dot", "additive"):
        network = _network(attention)
        inputs = _inputs()
        garbage = {k: v.clone() for k, v in inputs.items()}
        pad = inputs["past_padded"]
        garbage["past_target"][pad] = 1e6
        garbage["past_covariates"][pad] = -3e3
        with torch.no_grad():
            base, weights = network(**inputs)
            moved, _ = network(**garbage)
        torch.testing.assert_close(base, moved, rtol=0, atol=0)
        assert float(weights[0, :, :14].abs().max()) == 0.0
        torch.testing.assert_close(weights.sum(-1), torch.ones(4, 6))


def test_more_padding_in_the_panel_does_not_change_a_forecast(panel):
    df, _ = panel
    model = fast_model(input_size=30).fit(df)
    sizes = df.groupby("unique_id").size()
    short_id, long_id = sizes.idxmin(), sizes.idxmax()
    assert sizes[short_id] < 30 < sizes[long_id]
    alone = model.predict(df=df[df["unique_id"] == short_id])
    # Beside a longer series, the short one sits behind far more padding in the panel.
    together = model.predict(df=df[df["unique_id"].isin([short_id, long_id])])
    np.testing.assert_allclose(
        together.loc[together["unique_id"] == short_id, "y_hat"].to_numpy(), alone["y_hat"].to_numpy(), rtol=1e-6
    )


def test_masked_softmax_masks_before_normalising_and_guards_all_padded_rows():
    scores = torch.tensor([[[1.0, 2.0, 3.0]], [[1.0, 1.0, 1.0]]])
    padded = torch.tensor([[True, False, False], [True, True, True]])
    weights = masked_softmax(scores, padded)
    expected = torch.softmax(torch.tensor([2.0, 3.0]), dim=0)
    torch.testing.assert_close(weights[0, 0], torch.cat([torch.zeros(1), expected]))
    assert torch.equal(weights[1], torch.zeros(1, 3))


def test_additive_key_projection_is_computed_once_per_source():
    attention = AdditiveAttention(8)
    calls = []
    attention.key.register_forward_hook(lambda *args: calls.append(1))
    memory, queries = torch.randn(2, 10, 8), torch.randn(2, 6, 8)
    keys = attention.project_keys(memory)
    scores = attention.scores(queries, keys)
    assert scores.shape == (2, 6, 10) and len(calls) == 1
    naive = torch.stack(
        [attention.energy(torch.tanh(attention.query(queries[:, h])[:, None, :] + keys)).squeeze(-1) for h in range(6)], dim=1
    )
    torch.testing.assert_close(scores, naive)


def test_dot_product_scores_match_reference():
    attention = DotProductAttention(4)
    memory, queries = torch.randn(3, 5, 4), torch.randn(3, 2, 4)
    keys = attention.project_keys(memory)
    reference = np.einsum("bhd,btd->bht", queries.numpy(), keys.detach().numpy()) / 2.0
    np.testing.assert_allclose(attention.scores(queries, keys).detach().numpy(), reference, rtol=1e-5, atol=1e-6)
