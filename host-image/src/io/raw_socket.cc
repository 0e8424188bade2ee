#include "io/raw_socket.hh"

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "transport/segment.hh"
#include "xcp/header.hh"

namespace xcphost {
namespace {

// Tries the privileged FORCE option first (ignores net.core.{w,r}mem_max).
int set_buffer(int fd, int force_opt, int opt, int bytes, const char* what) {
  if (setsockopt(fd, SOL_SOCKET, force_opt, &bytes, sizeof bytes) != 0) {
    xcp::check_syscall(what, setsockopt(fd, SOL_SOCKET, opt, &bytes, sizeof bytes));
  }
  int got = 0;
  socklen_t len = sizeof got;
  xcp::check_syscall(what, getsockopt(fd, SOL_SOCKET, opt, &got, &len));
  return got;
}

sock_filter stmt(uint16_t code, uint32_t k) { return sock_filter{code, 0, 0, k}; }
sock_filter jump(uint16_t code, uint32_t k, size_t jt, size_t jf) {
  return sock_filter{code, static_cast<uint8_t>(jt), static_cast<uint8_t>(jf), k};
}

constexpr uint32_t kAcceptAll = 0xFFFFFFFFu;  // return value: keep the whole packet

}  // namespace

std::vector<sock_filter> port_filter_program(std::span<const PortRange> ranges) {
  if (ranges.empty() || ranges.size() > kMaxFilterPortRanges) {
    throw std::invalid_argument("port filter: " + std::to_string(ranges.size()) + " port ranges (valid: 1 to " +
                                std::to_string(kMaxFilterPortRanges) + ")");
  }
  for (const auto& r : ranges) {
    if (r.first > r.last) {
      throw std::invalid_argument("port filter: range " + std::to_string(r.first) + "-" + std::to_string(r.last) +
                                  " has first > last");
    }
  }
  constexpr uint8_t kControlVersionFormat =
      static_cast<uint8_t>((xcp::kXcpVersion << 4) | static_cast<uint8_t>(xcp::Format::kControl));
  std::vector<sock_filter> p;
  // The last two instructions are DROP then ACCEPT; jumps count from the
  // instruction after the jump, so they are computed against the final size.
  constexpr size_t kPrologue = 11;
  const size_t n = kPrologue + 2 * ranges.size() + 2;
  const size_t drop = n - 2;
  const size_t accept = n - 1;
  auto to = [&p](size_t target) { return target - p.size() - 1; };
  // X = IPv4 header length (IHL * 4).
  p.push_back(stmt(BPF_LDX | BPF_B | BPF_MSH, 0));
  // Format 3 (control) shims go to every process: XCP-i host duties.
  p.push_back(stmt(BPF_LD | BPF_B | BPF_IND, xcp::kOffsetVersionFormat));
  p.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, kControlVersionFormat, to(accept), 0));
  // Only version-4 shims carrying the transport have ports.
  p.push_back(stmt(BPF_ALU | BPF_RSH | BPF_K, 4));
  p.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, xcp::kXcpVersion, 0, to(drop)));
  p.push_back(stmt(BPF_LD | BPF_B | BPF_IND, xcp::kOffsetNextProtocol));
  p.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, kNextProtoTransport, 0, to(drop)));
  // X = IHL * 4 + hdr_len: the segment's start (the shim's own length field
  // covers the optional XCP-i and iXCP blocks).
  p.push_back(stmt(BPF_LD | BPF_B | BPF_IND, xcp::kOffsetHdrLen));
  // A = hdr_len; X += A via A += X, X = A.
  p.push_back(stmt(BPF_ALU | BPF_ADD | BPF_X, 0));
  p.push_back(stmt(BPF_MISC | BPF_TAX, 0));
  p.push_back(stmt(BPF_LD | BPF_H | BPF_IND, kSegmentDstPortOffset));
  if (p.size() != kPrologue) throw std::logic_error("port filter: prologue length changed");
  for (size_t i = 0; i < ranges.size(); ++i) {
    const size_t next = p.size() + 2;
    // port < first: next range; port > last: next range; else accept.
    p.push_back(jump(BPF_JMP | BPF_JGE | BPF_K, ranges[i].first, 0, to(next)));
    p.push_back(jump(BPF_JMP | BPF_JGT | BPF_K, ranges[i].last, to(next), to(accept)));
  }
  p.push_back(stmt(BPF_RET | BPF_K, 0));
  p.push_back(stmt(BPF_RET | BPF_K, kAcceptAll));
  return p;
}

std::vector<PortRange> consecutive_ports(uint16_t first, size_t count, uint16_t wrap_to) {
  if (count == 0) return {};
  const size_t lo = std::min<size_t>(first, wrap_to);
  const size_t span = 65536 - lo;
  if (count >= span) return {PortRange{static_cast<uint16_t>(lo), 65535}};
  const size_t last = size_t{first} + count - 1;
  if (last <= 65535) return {PortRange{first, static_cast<uint16_t>(last)}};
  return {PortRange{first, 65535}, PortRange{static_cast<uint16_t>(lo), static_cast<uint16_t>(lo + (last - 65536))}};
}

RawSocket::RawSocket(const RawSocketConfig& cfg)
    : fd_(static_cast<int>(xcp::check_syscall(
          "socket(AF_INET, SOCK_RAW, 253) (needs root or CAP_NET_RAW)",
          socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, xcp::kIpProtoXcp)))) {
  sndbuf_ = set_buffer(fd_.get(), SO_SNDBUFFORCE, SO_SNDBUF, cfg.buffer_bytes, "setsockopt(SO_SNDBUF)");
  rcvbuf_ = set_buffer(fd_.get(), SO_RCVBUFFORCE, SO_RCVBUF, cfg.buffer_bytes, "setsockopt(SO_RCVBUF)");
  if (cfg.ttl != 0) {
    const int ttl = cfg.ttl;
    xcp::check_syscall("setsockopt(IP_TTL)", setsockopt(fd_.get(), IPPROTO_IP, IP_TTL, &ttl, sizeof ttl));
  }
  // Never fragment: segments are sized to the MTU; a too-large one is an
  // error to report (EMSGSIZE), not something to split silently.
  const int pmtu = IP_PMTUDISC_PROBE;
  xcp::check_syscall("setsockopt(IP_MTU_DISCOVER)",
                     setsockopt(fd_.get(), IPPROTO_IP, IP_MTU_DISCOVER, &pmtu, sizeof pmtu));
}

void RawSocket::set_port_filter(std::span<const PortRange> ranges) {
  std::vector<sock_filter> prog = port_filter_program(ranges);
  const sock_fprog fprog{static_cast<unsigned short>(prog.size()), prog.data()};
  xcp::check_syscall("setsockopt(SO_ATTACH_FILTER)",
                     setsockopt(fd_.get(), SOL_SOCKET, SO_ATTACH_FILTER, &fprog, sizeof fprog));
  if (!filtered_) {
    // What arrived between socket() and now passed no filter: discard it
    // (libpcap does the same). The caller attaches before it sends or listens,
    // so none of it can be ours.
    uint8_t scratch[64];
    while (recv(fd_.get(), scratch, sizeof scratch, MSG_DONTWAIT | MSG_TRUNC) >= 0) ++discarded_before_filter_;
  }
  filtered_ = true;
}

std::optional<uint64_t> RawSocket::kernel_drops() const {
  struct stat st{};
  if (fstat(fd_.get(), &st) != 0) return std::nullopt;
  // sl local rem st tx:rx tr:tm retrnsmt uid timeout inode ref pointer drops
  std::ifstream in("/proc/net/raw");
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::istringstream f(line);
    std::string tok[13];
    for (auto& t : tok) f >> t;
    if (!f) continue;
    if (tok[9] == std::to_string(st.st_ino)) return std::stoull(tok[12]);
  }
  return std::nullopt;
}

}  // namespace xcphost
