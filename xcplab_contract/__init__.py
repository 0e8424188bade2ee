"""The plan contract shared by the orchestrator and the agent.

What both sides of a run must agree on, and nothing else: the plan's data model and
its JSON codec (`plan`, `codec`), the names a run gives what it creates (`naming`),
the error root (`errors`), the columns of every metrics file (`columns`), and where a
machine finds the native tools (`paths`).

Standard library only, so an agent on a remote machine installs it without the
orchestrator's dependencies (FastAPI, pandas, matplotlib...). Neither
`orchestrator` nor `agents` is imported from here.
"""
