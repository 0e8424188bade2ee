// xcp-pktgen: a UDP/IPv4 frame blaster for the forwarding benchmark.
// Writes one prebuilt Ethernet frame (valid IPv4 checksum, UDP checksum 0)
// to an AF_PACKET socket with sendmmsg batches, as fast as the kernel takes
// it (or paced to --pps, in batches of --batch frames, sleeping between
// them), for --seconds. Prints {"sent":N,"errors":N,"seconds":S}.
//   xcp-pktgen --ifname IF --src-mac M --dst-mac M --src-ip A --dst-ip B
//              --frame-bytes N --seconds S [--pps N] [--batch N]
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>

#include <array>
#include <cstdio>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/checksum.hh"
#include "util/net_address.hh"
#include "xcp/clock.hh"
#include "xcp/fd.hh"

namespace {

using namespace xcprouter;

std::vector<uint8_t> build_frame(const MacAddress& src_mac, const MacAddress& dst_mac, uint32_t src_ip,
                                 uint32_t dst_ip, size_t frame_bytes) {
  if (frame_bytes < 14 + 28 || frame_bytes > 1514) throw std::invalid_argument("--frame-bytes must be in [42, 1514]");
  std::vector<uint8_t> f(frame_bytes, 0);
  std::memcpy(f.data(), dst_mac.bytes.data(), 6);
  std::memcpy(f.data() + 6, src_mac.bytes.data(), 6);
  f[12] = 0x08;
  uint8_t* ip = f.data() + 14;
  const uint16_t total = static_cast<uint16_t>(frame_bytes - 14);
  ip[0] = 0x45;
  ip[2] = static_cast<uint8_t>(total >> 8);
  ip[3] = static_cast<uint8_t>(total);
  ip[8] = 64;
  ip[9] = 17;
  for (int i = 0; i < 4; ++i) {
    ip[12 + i] = static_cast<uint8_t>(src_ip >> (24 - 8 * i));
    ip[16 + i] = static_cast<uint8_t>(dst_ip >> (24 - 8 * i));
  }
  const uint16_t c = internet_checksum(ip, 20);
  ip[10] = static_cast<uint8_t>(c >> 8);
  ip[11] = static_cast<uint8_t>(c);
  uint8_t* udp = ip + 20;
  udp[0] = 0x9c;  // source port 40000
  udp[1] = 0x40;
  udp[2] = 0x23;  // destination port 9000 (discard-like: nobody listens)
  udp[3] = 0x28;
  udp[4] = static_cast<uint8_t>((total - 20) >> 8);
  udp[5] = static_cast<uint8_t>(total - 20);
  return f;
}

int run(std::map<std::string, std::string>& a) {
  for (const char* k : {"--ifname", "--src-mac", "--dst-mac", "--src-ip", "--dst-ip", "--frame-bytes", "--seconds"}) {
    if (!a.count(k)) throw std::invalid_argument(std::string("missing ") + k);
  }
  const auto src_mac = MacAddress::parse(a["--src-mac"]);
  const auto dst_mac = MacAddress::parse(a["--dst-mac"]);
  const auto src_ip = parse_ipv4(a["--src-ip"]);
  const auto dst_ip = parse_ipv4(a["--dst-ip"]);
  if (!src_mac || !dst_mac || !src_ip || !dst_ip) throw std::invalid_argument("bad MAC or IPv4 address");
  const auto frame = build_frame(*src_mac, *dst_mac, *src_ip, *dst_ip, std::stoul(a["--frame-bytes"]));
  const double seconds = std::stod(a["--seconds"]);
  const double pps = a.count("--pps") ? std::stod(a["--pps"]) : 0.0;

  xcp::FileDescriptor fd(static_cast<int>(
      xcp::check_syscall("socket(AF_PACKET)", ::socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0))));
  const int one = 1;
  (void)::setsockopt(fd.get(), SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof one);
  sockaddr_ll sll{};
  sll.sll_family = AF_PACKET;
  sll.sll_protocol = 0;  // send only
  sll.sll_ifindex = static_cast<int>(::if_nametoindex(a["--ifname"].c_str()));
  if (sll.sll_ifindex == 0) throw std::invalid_argument("no interface " + a["--ifname"]);
  xcp::check_syscall("bind", ::bind(fd.get(), reinterpret_cast<sockaddr*>(&sll), sizeof sll));

  constexpr size_t kBatch = 32;
  const size_t batch = a.count("--batch") ? std::stoul(a["--batch"]) : kBatch;
  if (batch < 1 || batch > kBatch) throw std::invalid_argument("--batch must be in [1, 32]");
  // A paced sender sleeps until its next frame is due: spinning would take a
  // core from the engine under test on a small machine. 1 ns slack: the
  // default 50 us would bunch the frames of a 100 Mb/s stream (120 us apart).
  (void)::prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
  std::array<iovec, kBatch> iov{};
  std::array<mmsghdr, kBatch> msgs{};
  for (size_t i = 0; i < kBatch; ++i) {
    iov[i] = {const_cast<uint8_t*>(frame.data()), frame.size()};
    msgs[i].msg_hdr.msg_iov = &iov[i];
    msgs[i].msg_hdr.msg_iovlen = 1;
  }
  const xcp::MonotonicClock clock;
  const xcp::Timestamp start = clock.now();
  const xcp::Timestamp end = start + xcp::Duration::seconds(seconds);
  uint64_t sent = 0, errors = 0;
  for (xcp::Timestamp now = start; now < end; now = clock.now()) {
    if (pps > 0 && static_cast<double>(sent) >= pps * (now - start).seconds_f()) {
      const xcp::Timestamp due = start + xcp::Duration::seconds(static_cast<double>(sent) / pps);
      const timespec ts{static_cast<time_t>(due.ns() / 1'000'000'000), static_cast<long>(due.ns() % 1'000'000'000)};
      ::clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr);
      continue;
    }
    const int n = ::sendmmsg(fd.get(), msgs.data(), static_cast<unsigned>(batch), 0);
    if (n < 0) {
      ++errors;
      continue;
    }
    sent += static_cast<uint64_t>(n);
  }
  std::printf("{\"sent\": %llu, \"errors\": %llu, \"seconds\": %.6f}\n", static_cast<unsigned long long>(sent),
              static_cast<unsigned long long>(errors), (clock.now() - start).seconds_f());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::map<std::string, std::string> args;
  for (int i = 1; i + 1 < argc; i += 2) args[argv[i]] = argv[i + 1];
  try {
    return run(args);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "xcp-pktgen: %s\n", e.what());
    return 1;
  }
}
