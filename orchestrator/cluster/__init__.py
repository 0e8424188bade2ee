"""The cluster backend's first parts: an inventory of machines, checking them, provisioning.

    inv = load_inventory("cluster.yaml")     # Inventory or SpecError (FILE:LINE: path: why)
    report = check_inventory(inv)            # reachability, versions, clocks, MTU
    provision(inv)                           # Ansible (cluster/ansible): agent + binaries,
                                             # the agent under a supervisor; idempotent

    placed, cost = place(plan, inv)          # node -> machine (networkx), or PlanError
    tunnels(placed, inv)                     # VXLAN per crossing link: VNI, name, MTU, commands

Running a placed plan across agents (SSH channel, start barrier, tunnels built by the
agents) is the cluster backend's: orchestrator/backends/cluster/ (docs/cluster.md).
"""
