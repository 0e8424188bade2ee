// Per-packet cost of an XCP port with the XCP–TCP fairness dropper on
// (tcp_fairness, seed 004): enqueue + dequeue as BM_XcpQdiscEnqueueDequeue
// (xcp_bench.cc), with 16 XCP and 4 kernel-TCP flows rotating, every packet
// inspected (zombie probe + hit rate), the dropper active (input above C) and
// p_drop updated on every TCP packet. Compare with BM_XcpQdiscEnqueueDequeue
// for the mechanism's own cost ("xcp.fairness_per_packet_ns").
#include <benchmark/benchmark.h>

#include <array>
#include <climits>
#include <memory>

#include "qdisc/xcp_qdisc.hh"
#include "xcp/header.hh"

namespace xcprouter {
namespace {

constexpr size_t kXcpFlows = 16;
constexpr size_t kTcpFlows = 4;
constexpr size_t kFlows = kXcpFlows + kTcpFlows;
constexpr size_t kStanding = 8;

PacketPtr make(size_t i) {
  auto p = std::make_unique<Packet>();
  p->ip_total_len = 1500;
  p->frame_len = 14 + 1500;
  p->flow = FlowKey{.src = 0x0a000001 + static_cast<uint32_t>(i), .dst = 0x0a010001,
                    .sport = static_cast<uint16_t>(5000 + i), .dport = 5201, .proto = 6};
  if (i < kXcpFlows) {
    p->xcp_offset = 34;
    p->flow.proto = xcp::kIpProtoXcp;
    xcp::XcpHeader h;
    h.next_protocol = 254;
    h.cwnd_bytes = 30000 + 7000 * static_cast<uint32_t>(i);
    h.rtt_us = 10000 + 9000 * static_cast<uint32_t>(i);
    h.feedback_bytes = INT32_MAX;
    xcp::write_header(h, p->xcp_shim());
    p->xcp = h;
  }
  return p;
}

void BM_XcpFairnessEnqueueDequeue(benchmark::State& state) {
  XcpQdisc q({.packets = 1000, .bytes = 0}, XcpParams{}, 1);
  q.set_capacity(xcp::Rate::from_megabits_per_s(1000));
  q.configure({{"tcp_fairness", true}});
  std::array<PacketPtr, kFlows> spare;
  for (size_t i = 0; i < kFlows; ++i) spare[i] = make(i);
  xcp::Timestamp now = xcp::Timestamp::zero();
  for (size_t i = 0; i < kStanding; ++i) q.enqueue(make(i), now);
  size_t next = 0;
  for (auto _ : state) {
    now += xcp::Duration::microseconds(1);  // 1 Mpps x 1500 B: input >> C, dropper active
    if (auto d = q.next_deadline(); d && *d <= now) q.on_deadline(now);
    PacketPtr& p = spare[next];
    if (!p) p = make(next);  // dropped (p_drop) and the queue ran dry: a fresh one
    p->xcp.feedback_bytes = INT32_MAX;
    q.enqueue(std::move(p), now);
    p = q.dequeue(now);
    benchmark::DoNotOptimize(p.get());
    next = (next + 1) % kFlows;
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["fairness_drops"] = static_cast<double>(q.counters().drops_fairness);
}
BENCHMARK(BM_XcpFairnessEnqueueDequeue);

}  // namespace
}  // namespace xcprouter
