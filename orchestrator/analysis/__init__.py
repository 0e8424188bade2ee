"""Post-run analysis: metrics files → summary.json, fidelity verdict, expectations, plots."""
