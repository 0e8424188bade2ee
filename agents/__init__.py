"""The per-machine agent: realises one machine's share of a plan and samples metrics."""
