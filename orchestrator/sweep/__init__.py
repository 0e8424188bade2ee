"""Parameter sweeps: a grid of spec overrides × repetitions, one run each, a table and a plot."""
