"""The cluster backend's first parts: an inventory of machines, checking them, provisioning.

    inv = load_inventory("cluster.yaml")     # Inventory or SpecError (FILE:LINE: path: why)
    report = check_inventory(inv)            # reachability, versions, clocks, MTU
    provision(inv)                           # Ansible (cluster/ansible): agent + binaries,
                                             # the agent under a supervisor; idempotent

Placement of a plan on machines, VXLAN between them and running a plan across agents
are not here yet (docs/cluster.md says exactly what is missing).
"""
