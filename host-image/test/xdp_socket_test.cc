// The pure parts of xcpperf --xdp (io/xsk_ring.hh, io/xdp_program.hh): ring
// index arithmetic across the u32 wrap, the send side's frame pool, the port
// bitmap, and the XDP filter run by the kernel itself (BPF_PROG_TEST_RUN, root):
// which frames it redirects and which it passes.
#include <gtest/gtest.h>
#include <linux/if_link.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <vector>

#include "io/link_path.hh"
#include "io/xdp_program.hh"
#include "io/xdp_socket.hh"
#include "io/xsk_ring.hh"
#include "transport/segment.hh"
#include "xcp/header.hh"

namespace xcphost {
namespace {

TEST(XskRing, ProducerAndConsumerAcrossTheCounterWrap) {
  std::array<uint64_t, 8> entries{};
  uint32_t prod = 0xFFFFFFFAu, cons = 0xFFFFFFFAu;  // six before the wrap
  XskRing<uint64_t> producer(&prod, &cons, entries.data(), 8);
  XskRing<uint64_t> consumer(&prod, &cons, entries.data(), 8);
  EXPECT_EQ(producer.free_entries(8), 8u);
  for (uint32_t i = 0; i < 8; ++i) producer.at(producer.next_produce() + i) = 100 + i;
  producer.produce(8);
  EXPECT_EQ(consumer.ready(16), 0u) << "nothing is visible before publish()";
  producer.publish();
  EXPECT_EQ(prod, 2u) << "the counter wrapped";
  EXPECT_EQ(producer.free_entries(1), 0u);
  ASSERT_EQ(consumer.ready(16), 8u);
  for (uint32_t i = 0; i < 8; ++i) EXPECT_EQ(consumer.at(consumer.next_consume() + i), 100 + i) << i;
  EXPECT_EQ(entries[(0xFFFFFFFAu + 6) & 7], 106u) << "entry i lives at i & (size - 1)";
  consumer.release(3);
  EXPECT_EQ(cons, 0xFFFFFFFDu);
  EXPECT_EQ(producer.free_entries(1), 3u) << "the producer sees the release when it runs short";
  EXPECT_EQ(producer.outstanding(), 5u);
  EXPECT_EQ(consumer.ready(2), 2u) << "at most max";
}

TEST(XskRing, RejectsASizeNotAPowerOfTwo) {
  std::array<uint64_t, 6> entries{};
  uint32_t prod = 0, cons = 0;
  EXPECT_THROW(XskRing<uint64_t>(&prod, &cons, entries.data(), 6), std::invalid_argument);
}

TEST(FramePool, HandsOutEachFrameOnceAndRefusesExtraReturns) {
  FramePool pool(4096, 2048, 3);
  EXPECT_EQ(pool.available(), 3u);
  std::vector<uint64_t> got;
  while (!pool.empty()) got.push_back(pool.take());
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, (std::vector<uint64_t>{4096, 6144, 8192}));
  for (uint64_t a : got) pool.give(a);
  EXPECT_THROW(pool.give(4096), std::logic_error);
}

TEST(PortBitmap, SetsExactlyTheRanges) {
  const std::vector<PortRange> ranges = {{5201, 5201}, {65534, 65535}, {7, 9}};
  const auto bits = port_bitmap(ranges);
  ASSERT_EQ(bits.size(), kPortBitmapBytes);
  auto set = [&](uint32_t p) { return (bits[p >> 3] >> (p & 7)) & 1; };
  size_t count = 0;
  for (uint32_t p = 0; p < 65536; ++p) count += set(p);
  EXPECT_EQ(count, 6u);
  EXPECT_TRUE(set(5201) && set(65535) && set(65534) && set(7) && set(9));
  EXPECT_FALSE(set(5200) || set(5202) || set(10) || set(6));
  const auto all = port_bitmap({});
  for (uint8_t b : all) ASSERT_EQ(b, 0xff) << "no ranges: every port";
}

// A frame as xcpperf sends it: Ethernet, IPv4 (via write_link_headers), shim, segment.
std::vector<uint8_t> frame(uint16_t dst_port, uint8_t shim_flags = 0, xcp::Format format = xcp::Format::kStandard,
                           uint32_t dst = 0x0A4E0002) {
  std::vector<uint8_t> f(kLinkHeadroom + 200, 0);
  xcp::XcpHeader shim;
  shim.format = format;
  shim.flags = shim_flags;
  shim.next_protocol = kNextProtoTransport;
  const size_t n = xcp::write_header(shim, std::span<uint8_t>(f).subspan(kLinkHeadroom));
  SegmentHeader seg;
  seg.src_port = 40000;
  seg.dst_port = dst_port;
  seg.flags = seg_flags::kAck;
  const size_t m = write_segment_header(seg, std::span<uint8_t>(f).subspan(kLinkHeadroom + n));
  LinkPath path;
  path.src_addr = 0x0A4E0001;
  write_link_headers(path, dst, 64, n + m + 100, f);
  return f;
}

class XdpFilter : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "loading an XDP program needs root (CAP_BPF)";
    xsks_ = bpf_map_create(BPF_MAP_TYPE_XSKMAP, 4, 4, 4, "t_xsks");
    ports_ = bpf_map_create(BPF_MAP_TYPE_ARRAY, 4, kPortBitmapBytes, 1, "t_ports");
    const std::vector<PortRange> mine = {{5201, 5201}};
    bpf_map_update(ports_.get(), 0, port_bitmap(mine).data());
    XdpFilterSpec spec;
    spec.xsk_map_fd = xsks_.get();
    spec.port_map_fd = ports_.get();
    spec.local_addr = 0x0A4E0002;
    spec.max_frame_bytes = XdpSocket::kMaxRxFrameBytes;
    // The queue has no socket in the map: a match falls back to this action,
    // which tells matches (DROP) from passes (PASS).
    spec.no_socket_action = XDP_DROP;
    prog_ = bpf_load_xdp(xdp_filter_program(spec));
  }
  uint32_t run(const std::vector<uint8_t>& f) { return bpf_xdp_test_run(prog_.get(), f); }
  xcp::FileDescriptor xsks_, ports_, prog_;
};

TEST_F(XdpFilter, RedirectsOnlyOurFlowsFrames) {
  EXPECT_EQ(run(frame(5201)), static_cast<uint32_t>(XDP_DROP)) << "our port: matched";
  EXPECT_EQ(run(frame(5201, xcp::flags::kXcpi | xcp::flags::kIxcp)), static_cast<uint32_t>(XDP_DROP))
      << "the port is found after hdr_len (36-byte shim)";
  EXPECT_EQ(run(frame(5202)), static_cast<uint32_t>(XDP_PASS)) << "another process's port";
  EXPECT_EQ(run(frame(5201, 0, xcp::Format::kStandard, 0x0A4E0003)), static_cast<uint32_t>(XDP_PASS))
      << "to another address";
  auto control = frame(5201, 0, xcp::Format::kControl);
  EXPECT_EQ(run(control), static_cast<uint32_t>(XDP_PASS)) << "XCP-i control messages go to every process";
  auto other_proto = frame(5201);
  other_proto[kEthHeaderBytes + 9] = 17;  // UDP
  EXPECT_EQ(run(other_proto), static_cast<uint32_t>(XDP_PASS));
  auto arp = frame(5201);
  arp[12] = 0x08;
  arp[13] = 0x06;
  EXPECT_EQ(run(arp), static_cast<uint32_t>(XDP_PASS));
  auto fragment = frame(5201);
  fragment[kEthHeaderBytes + 6] |= 0x20;  // MF
  EXPECT_EQ(run(fragment), static_cast<uint32_t>(XDP_PASS)) << "fragments are the kernel's to reassemble";
  auto options = frame(5201);
  options[kEthHeaderBytes] = 0x46;
  EXPECT_EQ(run(options), static_cast<uint32_t>(XDP_PASS));
  auto old_version = frame(5201);
  old_version[kLinkHeadroom + xcp::kOffsetVersionFormat] = 0x31;
  EXPECT_EQ(run(old_version), static_cast<uint32_t>(XDP_PASS));
}

TEST_F(XdpFilter, APortMapNeverWrittenRedirectsNothing) {
  // XdpSocket leaves the map as created until set_ports() (unless all_ports):
  // the program attached before the caller names its ports takes no frame.
  ports_ = bpf_map_create(BPF_MAP_TYPE_ARRAY, 4, kPortBitmapBytes, 1, "t_noports");
  XdpFilterSpec spec;
  spec.xsk_map_fd = xsks_.get();
  spec.port_map_fd = ports_.get();
  spec.max_frame_bytes = XdpSocket::kMaxRxFrameBytes;
  spec.no_socket_action = XDP_DROP;
  prog_ = bpf_load_xdp(xdp_filter_program(spec));
  EXPECT_EQ(run(frame(5201)), static_cast<uint32_t>(XDP_PASS));
  EXPECT_EQ(run(frame(40000)), static_cast<uint32_t>(XDP_PASS));
  bpf_map_update(ports_.get(), 0, port_bitmap({}).data());
  EXPECT_EQ(run(frame(40000)), static_cast<uint32_t>(XDP_DROP)) << "set_ports({}): every port";
}

TEST_F(XdpFilter, PassesShortAndOversizedFrames) {
  const auto full = frame(5201);
  for (size_t len : {size_t{0}, size_t{14}, kLinkHeadroom + 3, kLinkHeadroom + 20 + 3}) {
    std::vector<uint8_t> cut(full.begin(), full.begin() + static_cast<long>(len));
    if (cut.size() < 14) cut.resize(14, 0);  // the kernel wants an Ethernet header to run a test
    EXPECT_EQ(run(cut), static_cast<uint32_t>(XDP_PASS)) << len;
  }
  std::vector<uint8_t> big = full;
  big.resize(XdpSocket::kMaxRxFrameBytes + 1, 0);
  EXPECT_EQ(run(big), static_cast<uint32_t>(XDP_PASS)) << "would not fit a UMEM frame";
  big.resize(XdpSocket::kMaxRxFrameBytes, 0);
  EXPECT_EQ(run(big), static_cast<uint32_t>(XDP_DROP)) << "the longest frame that fits";
}

}  // namespace
}  // namespace xcphost
