// Per-packet cost of the queue disciplines on the forwarding path: one
// enqueue + one dequeue of a packet, including (for XCP) the interval sums,
// the departure feedback with stochastic rounding and the in-place header
// store, with the control timers fired as simulated time passes (1 Mpps).
// bench/bench_xcp.py reads BM_XcpQdiscEnqueueDequeue as "per_packet_ns" and
// BM_IxcpQdiscEnqueueDequeue (the same packets with the iXCP block, half of the
// flows bottlenecked at this link) as "ixcp_per_packet_ns".
#include <benchmark/benchmark.h>

#include <array>
#include <climits>
#include <memory>

#include "qdisc/drop_tail.hh"
#include "qdisc/qdisc_factory.hh"
#include "qdisc/red.hh"
#include "qdisc/xcp_qdisc.hh"
#include "xcp/header.hh"

namespace xcprouter {
namespace {

constexpr size_t kFlows = 16;
constexpr size_t kStanding = 8;  // packets kept queued, as at a busy port

constexpr uint32_t kLinkId = 7;  // the iXCP port's id; odd flows name another link

// bottleneck_id = 0: no iXCP block.
PacketPtr make_xcp(uint32_t size, uint32_t cwnd, uint32_t rtt_us, uint32_t bottleneck_id = 0) {
  auto p = std::make_unique<Packet>();
  p->ip_total_len = static_cast<uint16_t>(size);
  p->frame_len = 14 + size;
  p->xcp_offset = 34;
  xcp::XcpHeader h;
  h.next_protocol = 6;
  h.cwnd_bytes = cwnd;
  h.rtt_us = rtt_us;
  h.feedback_bytes = INT32_MAX;
  if (bottleneck_id != 0) {
    h.flags = xcp::flags::kIxcp;
    h.bottleneck_id = h.next_bottleneck_id = bottleneck_id;
  }
  xcp::write_header(h, p->xcp_shim());
  p->xcp = h;
  return p;
}

// Runs enqueue/dequeue of a rotating set of packets from kFlows flows.
void run(benchmark::State& state, Qdisc& q, bool ixcp = false) {
  q.set_capacity(xcp::Rate::from_megabits_per_s(1000));
  std::array<PacketPtr, kFlows> spare;
  for (size_t i = 0; i < kFlows; ++i) {
    const uint32_t id = !ixcp ? 0 : (i % 2 ? kLinkId + 1 : kLinkId);
    spare[i] = make_xcp(1500, 30000 + 7000 * static_cast<uint32_t>(i), 10000 + 9000 * static_cast<uint32_t>(i), id);
  }
  xcp::Timestamp now = xcp::Timestamp::zero();
  for (size_t i = 0; i < kStanding; ++i) q.enqueue(make_xcp(1500, 50000, 50000), now);
  size_t next = 0;
  for (auto _ : state) {
    now += xcp::Duration::microseconds(1);
    if (auto d = q.next_deadline(); d && *d <= now) q.on_deadline(now);
    PacketPtr& p = spare[next];
    p->xcp.feedback_bytes = INT32_MAX;
    q.enqueue(std::move(p), now);
    p = q.dequeue(now);
    benchmark::DoNotOptimize(p.get());
    next = (next + 1) % kFlows;
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_XcpQdiscEnqueueDequeue(benchmark::State& state) {
  XcpQdisc q({.packets = 1000, .bytes = 0}, XcpParams{}, 1);
  run(state, q);
}
BENCHMARK(BM_XcpQdiscEnqueueDequeue);

void BM_IxcpQdiscEnqueueDequeue(benchmark::State& state) {
  auto q = make_qdisc({{"kind", "ixcp"}, {"limit_packets", 1000}, {"params", {{"link_id", kLinkId}}}}, 1);
  run(state, *q, true);
}
BENCHMARK(BM_IxcpQdiscEnqueueDequeue);

void BM_DropTailEnqueueDequeue(benchmark::State& state) {
  DropTail q({.packets = 1000, .bytes = 0});
  run(state, q);
}
BENCHMARK(BM_DropTailEnqueueDequeue);

void BM_RedEnqueueDequeue(benchmark::State& state) {
  RedParams k;
  k.min_th = 100;  // above the standing queue: measures the average, not drops
  k.max_th = 300;
  Red q({.packets = 1000, .bytes = 0}, k, 1);
  run(state, q);
}
BENCHMARK(BM_RedEnqueueDequeue);

}  // namespace
}  // namespace xcprouter
