"""``weights.pt``: the network's tensors, read with ``weights_only=True`` and checked against their expected shapes.

The ensemble is built only once every tensor has the shape ``fitted.network`` gives it.
"""

from __future__ import annotations

import io

import torch

from .file_layout import CONFIG, WEIGHTS, Invalid, check_zip, show
from .network import Ensemble, NetworkConfig, Seq2SeqNetwork

# Up to about this many weights a template network is built on the CPU (a few MB at most); larger ones on the meta
# device, which allocates nothing but imports torch's compiler stack (1-12 s) the first time it initialises weights.
CPU_TEMPLATE_WEIGHTS = 5_000_000


def _template(config: NetworkConfig) -> Seq2SeqNetwork:
    """A network of ``config``'s shapes, for the shapes only."""
    d = config.hidden_size
    inputs = 2 + config.past_features + config.static_features + config.future_features + config.input_size
    estimate = 16 * d * d * config.num_layers + d * (inputs + config.horizon) + config.input_size * config.horizon
    if estimate <= CPU_TEMPLATE_WEIGHTS:
        return Seq2SeqNetwork(config)
    with torch.device("meta"):  # shapes without allocating anything
        return Seq2SeqNetwork(config)


def read_network(data: bytes, config: NetworkConfig, members: int) -> Ensemble:
    """The ensemble, built only once every tensor in ``weights.pt`` has the shape ``config`` gives it."""
    check_zip(data, WEIGHTS)
    try:
        state = torch.load(io.BytesIO(data), map_location="cpu", weights_only=True)
    except Exception as error:  # noqa: BLE001 - any failure here means an unusable file
        raise Invalid(f"Could not load `{WEIGHTS}`: {error}") from None
    if not isinstance(state, dict) or not all(isinstance(k, str) and isinstance(v, torch.Tensor) for k, v in state.items()):
        raise Invalid(f"`{WEIGHTS}` must hold a mapping of parameter names to tensors.")
    template = {name: tensor.shape for name, tensor in _template(config).state_dict().items()}
    found = {key.split(".")[1] for key in state if key.startswith("members.") and key.count(".") >= 2}
    if len(found) != members:
        raise Invalid(f"`fitted.n_members` in {CONFIG} is {members}, but `{WEIGHTS}` holds {len(found)} member(s).")
    expected = {f"members.{k}.{name}": shape for k in range(members) for name, shape in template.items()}
    missing, extra = sorted(set(expected) - set(state)), sorted(set(state) - set(expected))
    if missing or extra:
        raise Invalid(
            f"`{WEIGHTS}` does not hold the network `fitted.network` in {CONFIG} describes "
            f"(missing {show(missing)}, unexpected {show(extra)})."
        )
    for key, shape in expected.items():
        tensor = state[key]
        if tensor.shape != shape or not tensor.is_floating_point():
            raise Invalid(
                f"`{key}` in `{WEIGHTS}` is {tensor.dtype} of shape {tuple(tensor.shape)}, but `fitted.network` in "
                f"{CONFIG} gives a float tensor of shape {tuple(shape)}."
            )
    network = Ensemble(config, members)
    network.load_state_dict(state)
    network.eval()
    return network
