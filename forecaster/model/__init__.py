"""The model: the network (``network``, ``attention``), its training (``training``, ``members``),
the parameter table (``params``), the fitted state (``state``), the inference core that forecasts
from any origins of a panel (``inference``), the fitted model the package's modules use (``fitted``), the
occlusion check of attention and shares (``faithfulness``) and model files (``files``)."""
