"""Stdout callback `xcplab_json`: the whole play as one JSON document at the end.

The shape of the `json` callback of the ansible.posix collection (plays -> tasks -> hosts
-> result, and per-host stats), which `orchestrator/cluster/provision.py` reads; shipped
here because ansible-core alone (Debian's `ansible-core`) has no JSON stdout callback.
"""

from __future__ import annotations

import json
from typing import Any

from ansible.parsing.ajson import AnsibleJSONEncoder
from ansible.plugins.callback import CallbackBase

DOCUMENTATION = """
    name: xcplab_json
    type: stdout
    short_description: the play's results as one JSON document
    description: plays, tasks, per-host results and stats, printed when the play ends
"""


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "stdout"
    CALLBACK_NAME = "xcplab_json"

    def __init__(self, display: Any = None) -> None:
        super().__init__(display)
        self.plays: list[dict[str, Any]] = []

    def v2_playbook_on_play_start(self, play: Any) -> None:
        self.plays.append({"play": {"name": play.get_name()}, "tasks": []})

    def v2_playbook_on_task_start(self, task: Any, is_conditional: bool) -> None:
        self.plays[-1]["tasks"].append({"task": {"name": task.get_name()}, "hosts": {}})

    def v2_playbook_on_handler_task_start(self, task: Any) -> None:
        self.v2_playbook_on_task_start(task, False)

    def _record(self, result: Any, **flags: bool) -> None:
        if not self.plays or not self.plays[-1]["tasks"]:
            return
        host = result._host.get_name()
        self.plays[-1]["tasks"][-1]["hosts"][host] = {**result._result, **flags}

    def v2_runner_on_ok(self, result: Any, **_kw: Any) -> None:
        self._record(result)

    def v2_runner_on_failed(self, result: Any, ignore_errors: bool = False) -> None:
        self._record(result, failed=not ignore_errors)

    def v2_runner_on_unreachable(self, result: Any) -> None:
        self._record(result, unreachable=True)

    def v2_runner_on_skipped(self, result: Any, **_kw: Any) -> None:
        self._record(result, skipped=True)

    def v2_playbook_on_stats(self, stats: Any) -> None:
        summary = {h: stats.summarize(h) for h in sorted(stats.processed)}
        self._display.display(json.dumps({"plays": self.plays, "stats": summary},
                                          cls=AnsibleJSONEncoder, indent=1, sort_keys=True))
