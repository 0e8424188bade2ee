"""Flow `rto_backoff` and `xcp_feedback`: the xcpperf sender's rules that ns-2's agents differ
on (docs/ns2-backend.md, fig2c), their spec rules, argv and the ns-2 mapping."""

from __future__ import annotations

import flow_spec_helpers as helpers
from flow_spec_helpers import three_hosts

from orchestrator.backends.ns2.script import write_script
from xcplab_contract.plan import Plan


def plan_of(text: str) -> Plan:
    return helpers.plan_of(text, "s.yaml")


def test_defaults_add_nothing_and_ns2_mirrors_them() -> None:
    p = plan_of(three_hosts("  - {id: f, proto: xcp, src: h1, dst: h2}"))
    f = p.flow("f")
    assert (f.rto_backoff, f.xcp_feedback) == ("sample", "all_acks")
    assert "--rto-backoff" not in f.client_argv and "--xcp-feedback" not in f.client_argv
    text, mapping = write_script(p, "s.tr")
    # xcpperf's back-off rule is ns-2's ts_resetRTO_ true; every ACK's feedback ns-2 lacks
    assert "$tcp(0,1) set ts_resetRTO_ true" in text
    assert any("new ACKs only" in s for s in mapping["flows"][0]["substitutions"])


def test_ns2_rules_reach_xcpperf_and_map_exactly_in_ns2() -> None:
    p = plan_of(three_hosts("  - {id: f, proto: xcp, src: h1, dst: h2, rto_backoff: new_data,"
                            " xcp_feedback: new_acks}\n"
                            "  - {id: g, proto: newreno, src: h1, dst: h3}",
                            "rto_backoff: new_data"))
    assert p.flow("f").client_argv[-4:] == ("--rto-backoff", "new-data",
                                            "--xcp-feedback", "new-acks")
    assert p.flow("g").client_argv[-2:] == ("--rto-backoff", "new-data")  # from defaults
    text, mapping = write_script(p, "s.tr")
    assert "ts_resetRTO_" not in text  # ns-2's own rule
    assert not any("new ACKs" in s for s in mapping["flows"][0]["substitutions"])
    assert Plan.from_json(p.to_json()) == p


def test_they_are_refused_where_the_sender_has_no_such_rule() -> None:
    assert any("rto_backoff applies to the userspace stack" in e for e in helpers.problems(
        three_hosts("  - {id: f, proto: tcp, cc: reno, src: h1, dst: h2, rto_backoff: new_data}"),
        "s.yaml"))
    assert any("xcp_feedback applies to xcp flows, not hstcp" in e for e in helpers.problems(
        three_hosts("  - {id: f, proto: hstcp, src: h1, dst: h2, xcp_feedback: new_acks}"),
        "s.yaml"))
