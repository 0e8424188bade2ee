// The XDP program behind xcpperf --xdp (io/xdp_socket.hh), written as eBPF
// instructions here and loaded with bpf(2): no libbpf, no clang at build time.
//
// It redirects to the AF_XDP socket of the receive queue (an XSKMAP entry)
// only the frames of this process's flows, and passes everything else to the
// kernel untouched (ARP, ICMP, other processes' flows, XCP-i control
// messages, fragments, IP options, frames larger than a UMEM frame):
//
//   Ethernet type IPv4, IHL 5, not a fragment, protocol 253, destination
//   address `local_addr` (any when 0), shim version 4 with next_protocol 254
//   and not format 3 (control), and the segment's destination port — after
//   the shim's hdr_len bytes — set in the port bitmap (an ARRAY map of one
//   8 KiB value: bit p%8 of byte p/8).
//
// A frame matched while the queue has no socket in the map falls back to
// `no_socket_action` (XDP_PASS in use, so a queue without a socket still
// reaches the raw socket).
#pragma once

#include <linux/bpf.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "io/raw_socket.hh"
#include "xcp/fd.hh"

namespace xcphost {

inline constexpr size_t kPortBitmapBytes = 65536 / 8;

struct XdpFilterSpec {
  int xsk_map_fd = -1;
  int port_map_fd = -1;
  uint32_t local_addr = 0;    // host order; 0: any destination address
  uint32_t max_frame_bytes = 0;  // longer frames are passed (they would not fit a UMEM frame)
  uint32_t no_socket_action = XDP_PASS;
};

// The program's instructions (map fds embedded).
std::vector<bpf_insn> xdp_filter_program(const XdpFilterSpec& spec);

// The bitmap value with the ports of `ranges` set (all ports when `ranges` is empty).
std::vector<uint8_t> port_bitmap(std::span<const PortRange> ranges);

// bpf(2) wrappers; each throws xcp::SystemError naming the action.
xcp::FileDescriptor bpf_map_create(uint32_t type, uint32_t key_size, uint32_t value_size, uint32_t max_entries,
                                   const char* name);
void bpf_map_update(int map_fd, uint32_t key, const void* value);
// Loads an XDP program; a verifier rejection throws with the verifier's log.
xcp::FileDescriptor bpf_load_xdp(std::span<const bpf_insn> insns);
// Attaches `prog_fd` to `ifindex` as a bpf_link: detached when the last
// reference to the link (the returned fd) is closed, so a process that dies
// takes its program with it. `xdp_flags`: XDP_FLAGS_DRV_MODE or _SKB_MODE.
xcp::FileDescriptor bpf_xdp_link(int prog_fd, int ifindex, uint32_t xdp_flags);
// BPF_PROG_TEST_RUN of one frame: the program's return value (XDP action).
uint32_t bpf_xdp_test_run(int prog_fd, std::span<const uint8_t> frame);

}  // namespace xcphost
