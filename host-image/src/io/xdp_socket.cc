#include "io/xdp_socket.hh"

#include <linux/if_link.h>
#include <sys/mman.h>
#include <sys/socket.h>

#include <cerrno>

#include "io/xdp_program.hh"

#ifndef SOL_XDP
#define SOL_XDP 283
#endif

namespace xcphost {
namespace {

void set_ring(int fd, int opt, uint32_t entries, const char* what) {
  xcp::check_syscall(what, setsockopt(fd, SOL_XDP, opt, &entries, sizeof entries));
}

void* map_ring(int fd, size_t bytes, off_t pgoff, const char* what) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, pgoff);
  if (p == MAP_FAILED) throw xcp::SystemError(what, errno);
  return p;
}

template <typename Entry>
XskRing<Entry> ring_at(void* base, const xdp_ring_offset& off, uint32_t entries) {
  auto* b = static_cast<uint8_t*>(base);
  return XskRing<Entry>(reinterpret_cast<uint32_t*>(b + off.producer), reinterpret_cast<uint32_t*>(b + off.consumer),
                        reinterpret_cast<Entry*>(b + off.desc), entries);
}

}  // namespace

XdpSocket::XdpSocket(const XdpSocketConfig& cfg)
    : ifindex_(cfg.ifindex), tx_frames_(uint64_t{kRxFrames} * kFrameBytes, kFrameBytes, kTxFrames) {
  try {
    fd_ = xcp::FileDescriptor(static_cast<int>(
        xcp::check_syscall("socket(AF_XDP)", socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0))));
    const int fd = fd_.get();
    umem_bytes_ = size_t{kRxFrames + kTxFrames} * kFrameBytes;
    void* mem = mmap(nullptr, umem_bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (mem == MAP_FAILED) throw xcp::SystemError("mmap of the AF_XDP UMEM", errno);
    umem_ = static_cast<uint8_t*>(mem);
    xdp_umem_reg reg{};
    reg.addr = reinterpret_cast<uintptr_t>(umem_);
    reg.len = umem_bytes_;
    reg.chunk_size = kFrameBytes;
    reg.headroom = 0;
    xcp::check_syscall("setsockopt(XDP_UMEM_REG)", setsockopt(fd, SOL_XDP, XDP_UMEM_REG, &reg, sizeof reg));
    set_ring(fd, XDP_UMEM_FILL_RING, kRxFrames, "setsockopt(XDP_UMEM_FILL_RING)");
    set_ring(fd, XDP_UMEM_COMPLETION_RING, kTxFrames, "setsockopt(XDP_UMEM_COMPLETION_RING)");
    set_ring(fd, XDP_RX_RING, kRxFrames, "setsockopt(XDP_RX_RING)");
    set_ring(fd, XDP_TX_RING, kTxFrames, "setsockopt(XDP_TX_RING)");
    xdp_mmap_offsets off{};
    socklen_t olen = sizeof off;
    xcp::check_syscall("getsockopt(XDP_MMAP_OFFSETS)", getsockopt(fd, SOL_XDP, XDP_MMAP_OFFSETS, &off, &olen));
    maps_[0] = {nullptr, off.fr.desc + kRxFrames * sizeof(uint64_t)};
    maps_[0].addr = map_ring(fd, maps_[0].bytes, XDP_UMEM_PGOFF_FILL_RING, "mmap of the XDP fill ring");
    maps_[1] = {nullptr, off.cr.desc + kTxFrames * sizeof(uint64_t)};
    maps_[1].addr = map_ring(fd, maps_[1].bytes, XDP_UMEM_PGOFF_COMPLETION_RING, "mmap of the XDP completion ring");
    maps_[2] = {nullptr, off.rx.desc + kRxFrames * sizeof(xdp_desc)};
    maps_[2].addr = map_ring(fd, maps_[2].bytes, XDP_PGOFF_RX_RING, "mmap of the XDP rx ring");
    maps_[3] = {nullptr, off.tx.desc + kTxFrames * sizeof(xdp_desc)};
    maps_[3].addr = map_ring(fd, maps_[3].bytes, XDP_PGOFF_TX_RING, "mmap of the XDP tx ring");
    fill_ = ring_at<uint64_t>(maps_[0].addr, off.fr, kRxFrames);
    comp_ = ring_at<uint64_t>(maps_[1].addr, off.cr, kTxFrames);
    rx_ = ring_at<xdp_desc>(maps_[2].addr, off.rx, kRxFrames);
    tx_ = ring_at<xdp_desc>(maps_[3].addr, off.tx, kTxFrames);
    // The first kRxFrames frames receive: every one waits in the fill ring.
    for (uint32_t i = 0; i < kRxFrames; ++i) fill_.at(fill_.next_produce() + i) = uint64_t{i} * kFrameBytes;
    fill_.produce(kRxFrames);
    fill_.publish();

    sockaddr_xdp sa{};
    sa.sxdp_family = AF_XDP;
    sa.sxdp_ifindex = static_cast<uint32_t>(cfg.ifindex);
    sa.sxdp_queue_id = cfg.queue;
    sa.sxdp_flags = XDP_COPY;
    if (bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0) {
      const int err = errno;
      throw xcp::SystemError(err == EBUSY ? "bind(AF_XDP) to the interface's queue (another --xdp process holds it)"
                                          : "bind(AF_XDP) to the interface's queue",
                             err);
    }

    xsk_map_ = bpf_map_create(BPF_MAP_TYPE_XSKMAP, 4, 4, 64, "xcpperf_xsks");
    port_map_ = bpf_map_create(BPF_MAP_TYPE_ARRAY, 4, kPortBitmapBytes, 1, "xcpperf_ports");
    if (cfg.all_ports) set_ports({});  // else the ARRAY map's value starts zeroed: no port
    const uint32_t xsk_fd = static_cast<uint32_t>(fd);
    bpf_map_update(xsk_map_.get(), cfg.queue, &xsk_fd);
    XdpFilterSpec spec;
    spec.xsk_map_fd = xsk_map_.get();
    spec.port_map_fd = port_map_.get();
    spec.local_addr = cfg.local_addr;
    spec.max_frame_bytes = kMaxRxFrameBytes;
    prog_ = bpf_load_xdp(xdp_filter_program(spec));
    // The generic (skb) hook first: on veth it carried 4453 and 4480 Mb/s where
    // veth's native hook carried 3991 (one CPU, alternated, 2026-11-28 01:00 UTC):
    // native veth XDP queues every frame through a ptr_ring and NAPI and copies
    // each skb from the sender's generic transmit path into a page-pool buffer
    // (skb_pp_cow_data, THROUGHPUT.md). The driver hook where the generic one is refused.
    try {
      link_ = bpf_xdp_link(prog_.get(), cfg.ifindex, XDP_FLAGS_SKB_MODE);
    } catch (const xcp::SystemError& e) {
      if (e.error_code() == EBUSY || e.error_code() == EEXIST) throw;  // another program is attached
      link_ = bpf_xdp_link(prog_.get(), cfg.ifindex, XDP_FLAGS_DRV_MODE);
      native_ = true;
    }
  } catch (...) {
    unmap();  // the fds close with their members
    throw;
  }
}

XdpSocket::~XdpSocket() {
  link_.close();
  unmap();
}

void XdpSocket::unmap() {
  for (auto& m : maps_) {
    if (m.addr != nullptr) munmap(m.addr, m.bytes);
    m.addr = nullptr;
  }
  if (umem_ != nullptr) munmap(umem_, umem_bytes_);
  umem_ = nullptr;
}

void XdpSocket::set_ports(std::span<const PortRange> ranges) {
  const std::vector<uint8_t> bits = port_bitmap(ranges);
  bpf_map_update(port_map_.get(), 0, bits.data());
}

void XdpSocket::reap_completions() {
  const uint32_t n = comp_.ready(kTxFrames);
  for (uint32_t i = 0; i < n; ++i) tx_frames_.give(comp_.at(comp_.next_consume() + i));
  if (n > 0) comp_.release(n);
}

bool XdpSocket::tx_room() {
  if (tx_reserved_) return true;
  if (tx_frames_.empty()) reap_completions();
  return !tx_frames_.empty() && tx_.free_entries(1) > 0;
}

std::span<uint8_t> XdpSocket::tx_frame() {
  if (!tx_reserved_) {
    if (!tx_room()) return {};
    tx_reserved_addr_ = tx_frames_.take();
    tx_reserved_ = true;
  }
  return {umem_ + tx_reserved_addr_, kFrameBytes};
}

void XdpSocket::tx_commit(size_t frame_bytes) {
  xdp_desc& d = tx_.at(tx_.next_produce());
  d.addr = tx_reserved_addr_;
  d.len = static_cast<uint32_t>(frame_bytes);
  d.options = 0;
  tx_.produce(1);
  tx_reserved_ = false;
  tx_unkicked_ = true;
  ++stats_.tx_packets;
}

bool XdpSocket::tx_flush() {
  if (!tx_unkicked_) {
    reap_completions();
    return true;
  }
  tx_.publish();
  // The generic transmit path sends at most 32 frames per kick and answers
  // EAGAIN while more wait; stop when a kick made no progress.
  for (uint32_t attempts = 0; attempts < kTxFrames / 32 + 4; ++attempts) {
    reap_completions();
    const uint32_t before = tx_.outstanding();
    if (before == 0) break;
    const ssize_t r = sendto(fd_.get(), nullptr, 0, MSG_DONTWAIT, nullptr, 0);
    ++stats_.tx_kicks;
    if (r < 0 && errno != EAGAIN && errno != EBUSY && errno != ENOBUFS && errno != EINTR) {
      ++stats_.tx_kick_errors;
      stats_.last_errno = errno;
    }
    if (tx_.outstanding() == before) break;
  }
  reap_completions();
  tx_unkicked_ = tx_.outstanding() > 0;
  return !tx_unkicked_;
}

xdp_statistics XdpSocket::kernel_stats() const {
  xdp_statistics s{};
  socklen_t len = sizeof s;
  if (getsockopt(fd_.get(), SOL_XDP, XDP_STATISTICS, &s, &len) != 0) return xdp_statistics{};
  return s;
}

}  // namespace xcphost
