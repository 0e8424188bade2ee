#include "io/link_path.hh"

#include <arpa/inet.h>
#include <net/if_arp.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <sstream>

#include "xcp/fd.hh"
#include "xcp/header.hh"

namespace xcphost {
namespace {

struct RouteAnswer {
  int oif = 0;
  uint32_t gateway = 0;  // network order; 0: on-link
  uint32_t prefsrc = 0;  // network order
};

// One RTM_GETROUTE for dst (what `ip route get` asks).
std::optional<RouteAnswer> kernel_route(uint32_t dst_net) {
  const int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
  if (fd < 0) return std::nullopt;
  const xcp::FileDescriptor guard(fd);
  struct {
    nlmsghdr nh;
    rtmsg rt;
    alignas(NLMSG_ALIGNTO) uint8_t attrs[RTA_SPACE(4)];
  } req{};
  req.nh.nlmsg_len = NLMSG_LENGTH(sizeof(rtmsg)) + RTA_SPACE(4);
  req.nh.nlmsg_type = RTM_GETROUTE;
  req.nh.nlmsg_flags = NLM_F_REQUEST;
  req.nh.nlmsg_seq = 1;
  req.rt.rtm_family = AF_INET;
  req.rt.rtm_dst_len = 32;
  auto* a = reinterpret_cast<rtattr*>(req.attrs);
  a->rta_type = RTA_DST;
  a->rta_len = RTA_LENGTH(4);
  std::memcpy(RTA_DATA(a), &dst_net, 4);
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  if (sendto(fd, &req, req.nh.nlmsg_len, 0, reinterpret_cast<sockaddr*>(&kernel), sizeof kernel) < 0) {
    return std::nullopt;
  }
  alignas(nlmsghdr) uint8_t buf[8192];
  const ssize_t n = recv(fd, buf, sizeof buf, 0);
  if (n < 0) return std::nullopt;
  auto len = static_cast<unsigned>(n);
  for (auto* nh = reinterpret_cast<nlmsghdr*>(buf); NLMSG_OK(nh, len); nh = NLMSG_NEXT(nh, len)) {
    if (nh->nlmsg_type != RTM_NEWROUTE) return std::nullopt;  // NLMSG_ERROR: no route
    const auto* rt = static_cast<const rtmsg*>(NLMSG_DATA(nh));
    if (rt->rtm_type != RTN_UNICAST) return std::nullopt;  // local, broadcast, blackhole...
    RouteAnswer out;
    int alen = static_cast<int>(RTM_PAYLOAD(nh));
    for (auto* at = RTM_RTA(rt); RTA_OK(at, alen); at = RTA_NEXT(at, alen)) {
      if (at->rta_type == RTA_OIF && RTA_PAYLOAD(at) >= 4) std::memcpy(&out.oif, RTA_DATA(at), 4);
      if (at->rta_type == RTA_GATEWAY && RTA_PAYLOAD(at) == 4) std::memcpy(&out.gateway, RTA_DATA(at), 4);
      if (at->rta_type == RTA_PREFSRC && RTA_PAYLOAD(at) == 4) std::memcpy(&out.prefsrc, RTA_DATA(at), 4);
    }
    if (out.oif <= 0 || out.prefsrc == 0) return std::nullopt;  // multipath, or no source address
    return out;
  }
  return std::nullopt;
}

// The complete neighbour entry for `hop` on `dev` (/proc/net/arp of this
// namespace: "IP address, HW type, Flags, HW address, Mask, Device").
std::optional<std::array<uint8_t, 6>> neighbour_mac(uint32_t hop_net, const std::string& dev) {
  char want[INET_ADDRSTRLEN] = {};
  if (inet_ntop(AF_INET, &hop_net, want, sizeof want) == nullptr) return std::nullopt;
  std::ifstream in("/proc/net/arp");
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::istringstream f(line);
    std::string ip, hwtype, flags, mac, mask, device;
    if (!(f >> ip >> hwtype >> flags >> mac >> mask >> device)) continue;
    if (ip != want || device != dev) continue;
    if ((std::stoul(flags, nullptr, 16) & ATF_COM) == 0) return std::nullopt;
    std::array<uint8_t, 6> out{};
    unsigned b[6];
    if (std::sscanf(mac.c_str(), "%x:%x:%x:%x:%x:%x", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5]) != 6) {
      return std::nullopt;
    }
    for (size_t i = 0; i < 6; ++i) out[i] = static_cast<uint8_t>(b[i]);
    return out;
  }
  return std::nullopt;
}

}  // namespace

std::optional<LinkPath> resolve_link_path(uint32_t dst) {
  const uint32_t dst_net = htonl(dst);
  const auto route = kernel_route(dst_net);
  if (!route) return std::nullopt;
  char name[IF_NAMESIZE] = {};
  if (if_indextoname(static_cast<unsigned>(route->oif), name) == nullptr) return std::nullopt;
  const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return std::nullopt;
  const xcp::FileDescriptor guard(fd);
  ifreq ifr{};
  std::memcpy(ifr.ifr_name, name, IF_NAMESIZE);  // if_indextoname wrote a terminated name
  if (ioctl(fd, SIOCGIFHWADDR, &ifr) != 0 || ifr.ifr_hwaddr.sa_family != ARPHRD_ETHER) return std::nullopt;
  LinkPath p;
  std::memcpy(p.src_mac.data(), ifr.ifr_hwaddr.sa_data, 6);
  if (ioctl(fd, SIOCGIFMTU, &ifr) != 0 || ifr.ifr_mtu <= static_cast<int>(kIpv4HeaderBytes)) return std::nullopt;
  p.mtu = static_cast<uint32_t>(ifr.ifr_mtu);
  const auto mac = neighbour_mac(route->gateway != 0 ? route->gateway : dst_net, name);
  if (!mac) return std::nullopt;
  p.dst_mac = *mac;
  p.ifindex = route->oif;
  p.src_addr = ntohl(route->prefsrc);
  return p;
}

uint8_t default_ip_ttl() {
  std::ifstream in("/proc/sys/net/ipv4/ip_default_ttl");
  int ttl = 0;
  if (in >> ttl && ttl > 0 && ttl < 256) return static_cast<uint8_t>(ttl);
  return 64;
}

uint16_t ipv4_header_checksum(std::span<const uint8_t> header) {
  uint32_t sum = 0;
  for (size_t i = 0; i + 1 < header.size(); i += 2) sum += (uint32_t{header[i]} << 8) | header[i + 1];
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return static_cast<uint16_t>(~sum);
}

void write_link_headers(const LinkPath& path, uint32_t dst, uint8_t ttl, size_t ip_payload_bytes,
                        std::span<uint8_t> frame) {
  uint8_t* e = frame.data();
  std::memcpy(e, path.dst_mac.data(), 6);
  std::memcpy(e + 6, path.src_mac.data(), 6);
  e[12] = 0x08;  // ETH_P_IP
  e[13] = 0x00;
  uint8_t* ip = e + kEthHeaderBytes;
  const size_t total = kIpv4HeaderBytes + ip_payload_bytes;
  ip[0] = 0x45;
  ip[1] = 0;
  ip[2] = static_cast<uint8_t>(total >> 8);
  ip[3] = static_cast<uint8_t>(total);
  ip[4] = ip[5] = 0;  // ID 0, as the kernel's raw socket sends DF packets
  ip[6] = 0x40;       // DF
  ip[7] = 0;
  ip[8] = ttl;
  ip[9] = xcp::kIpProtoXcp;
  ip[10] = ip[11] = 0;
  for (int i = 0; i < 4; ++i) {
    ip[12 + i] = static_cast<uint8_t>(path.src_addr >> (24 - 8 * i));
    ip[16 + i] = static_cast<uint8_t>(dst >> (24 - 8 * i));
  }
  const uint16_t sum = ipv4_header_checksum({ip, kIpv4HeaderBytes});
  ip[10] = static_cast<uint8_t>(sum >> 8);
  ip[11] = static_cast<uint8_t>(sum);
}

}  // namespace xcphost
