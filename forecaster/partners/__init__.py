"""Statistical partners blended into the network's forecast: the Theta method (``standard_theta``),
damped Holt-Winters (``holt_winters``) and the blend itself (``blend``), each fitted on all series at once."""
