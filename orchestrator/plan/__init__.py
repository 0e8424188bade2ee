"""Spec -> plan: addressing, MACs, routes, engine configs, flows, timeline (pure).

The plan's data model lives in the contract package (`xcplab_contract.plan`), which
the agent imports too; this package only computes plans.
"""
