"""Data preparation: long frames validated (``validation``), covariate roles and the leakage guard
(``roles``), frequencies and calendars (``frequency``), covariate encoders (``features``), where rows lie on
the calendar (``placement``), the padded panel (``panel``), windows gathered at any origin (``windows``),
per-window and MASE scales (``scaling``) and the long-run decomposition known at an origin (``decomposition``)."""
