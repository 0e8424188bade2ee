#include "core/port.hh"

#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <net/if.h>
#include <sys/ioctl.h>

#include <fcntl.h>
#include <sched.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <system_error>
#include <thread>

#include "core/packet_pool.hh"

namespace xcprouter {

namespace {

void set_int_option(int fd, int level, int name, int value) {
  // Best effort: buffer sizes and bypass are optimisations, not correctness.
  (void)::setsockopt(fd, level, name, &value, sizeof value);
}

}  // namespace

Port::Port(const std::string& ifname, xcp::Rate link_rate, uint64_t hold_packets) : ifname_(ifname) {
  if (ifname.size() >= IFNAMSIZ) throw std::invalid_argument("interface name too long: " + ifname);
  // Protocol 0 at creation: nothing is queued before bind() picks the interface.
  fd_ = xcp::FileDescriptor(static_cast<int>(xcp::check_syscall(
      "socket(AF_PACKET) for " + ifname, ::socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, 0))));
  const unsigned index = ::if_nametoindex(ifname.c_str());
  if (index == 0) throw xcp::SystemError("if_nametoindex(" + ifname + ")", errno);

  ifreq ifr{};
  std::strncpy(ifr.ifr_name, ifname.c_str(), IFNAMSIZ - 1);
  xcp::check_syscall("ioctl(SIOCGIFHWADDR) for " + ifname, ::ioctl(fd_.get(), SIOCGIFHWADDR, &ifr));
  std::memcpy(mac_.bytes.data(), ifr.ifr_hwaddr.sa_data, 6);

  set_int_option(fd_.get(), SOL_PACKET, PACKET_IGNORE_OUTGOING, 1);
  set_int_option(fd_.get(), SOL_PACKET, PACKET_QDISC_BYPASS, 1);
  set_int_option(fd_.get(), SOL_SOCKET, SO_RCVBUFFORCE, 8 << 20);
  set_int_option(fd_.get(), SOL_SOCKET, SO_SNDBUFFORCE, 8 << 20);

  // The ring must exist before bind(); without one we use recvmmsg.
  try {
    ring_ = std::make_unique<RxRing>(fd_.get(), RxRing::slots_for(link_rate, hold_packets));
  } catch (const xcp::SystemError&) {
    ring_.reset();
  }

  sockaddr_ll sll{};
  sll.sll_family = AF_PACKET;
  sll.sll_protocol = htons(ETH_P_ALL);
  sll.sll_ifindex = static_cast<int>(index);
  xcp::check_syscall("bind(AF_PACKET, " + ifname + ")",
                     ::bind(fd_.get(), reinterpret_cast<sockaddr*>(&sll), sizeof sll));

  for (size_t i = 0; i < kBatch; ++i) {
    msgs_[i].msg_hdr.msg_iov = &rx_iov_[i];
    msgs_[i].msg_hdr.msg_iovlen = 1;
    tx_msgs_[i].msg_hdr.msg_iov = &tx_iov_[i];
    tx_msgs_[i].msg_hdr.msg_iovlen = 1;
  }
}

std::vector<std::unique_ptr<Port>> Port::open_many(const std::vector<PortRequest>& requests) {
  std::vector<std::unique_ptr<Port>> ports(requests.size());
  std::vector<std::exception_ptr> errors(requests.size());
  // Workers start in this thread's namespace; a request without one returns there.
  const xcp::FileDescriptor home(static_cast<int>(xcp::check_syscall(
      "open(/proc/thread-self/ns/net)", ::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC))));
  std::atomic<size_t> next{0};
  auto worker = [&] {
    // setns changes only this thread's namespace, and the thread ends here:
    // nothing to restore.
    const std::string* current = nullptr;  // the namespace entered; null: unknown
    for (size_t i = next++; i < requests.size(); i = next++) {
      const PortRequest& r = requests[i];
      try {
        if (current == nullptr || r.netns != *current) {
          if (r.netns.empty()) {
            xcp::check_syscall("setns(back)", ::setns(home.get(), CLONE_NEWNET));
          } else {
            const xcp::FileDescriptor ns(static_cast<int>(xcp::check_syscall(
                "open(" + r.netns + ")", ::open(r.netns.c_str(), O_RDONLY | O_CLOEXEC))));
            xcp::check_syscall("setns(" + r.netns + ")", ::setns(ns.get(), CLONE_NEWNET));
          }
          current = &r.netns;
        }
        ports[i] = std::make_unique<Port>(r.ifname, r.link_rate, r.hold_packets);
      } catch (...) {
        errors[i] = std::current_exception();
        current = nullptr;  // unknown after a failed setns: enter the next one afresh
      }
    }
  };
  {
    std::vector<std::jthread> pool;
    const size_t n = requests.size() < kOpenThreads ? requests.size() : kOpenThreads;
    for (size_t t = 0; t < n; ++t) pool.emplace_back(worker);
  }  // joined
  for (size_t i = 0; i < requests.size(); ++i) {
    if (!errors[i]) continue;
    try {
      std::rethrow_exception(errors[i]);
    } catch (const std::exception& e) {
      throw std::runtime_error("port " + requests[i].ifname + " (netns " +
                               (requests[i].netns.empty() ? "current" : requests[i].netns) + "): " + e.what());
    }
  }
  return ports;
}

void Port::close_many(std::vector<std::unique_ptr<Port>>& ports) {
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next++; i < ports.size(); i = next++) ports[i].reset();  // never throws
  };
  {
    std::vector<std::jthread> pool;
    const size_t n = ports.size() < kCloseThreads ? ports.size() : kCloseThreads;
    for (size_t t = 0; t < n; ++t) {
      try {
        pool.emplace_back(worker);
      } catch (const std::system_error&) {
        break;  // no more threads: those started (or this one, below) close the rest
      }
    }
    if (pool.empty()) worker();
  }  // joined
  ports.clear();
}

int Port::receive_batch() {
  for (size_t i = 0; i < kBatch; ++i) {
    if (!rx_[i]) rx_[i] = PacketPool::acquire();
    rx_iov_[i].iov_base = rx_[i]->data();
    rx_iov_[i].iov_len = Packet::kCapacity;
    msgs_[i].msg_hdr.msg_name = &addrs_[i];
    msgs_[i].msg_hdr.msg_namelen = sizeof(sockaddr_ll);
    msgs_[i].msg_hdr.msg_flags = 0;
  }
  ++io_.rx_syscalls;
  const int n = ::recvmmsg(fd_.get(), msgs_.data(), kBatch, MSG_DONTWAIT, nullptr);
  return n > 0 ? n : 0;  // EAGAIN (or a transient error): nothing this round
}

int Port::clear_error() {
  int err = 0;
  socklen_t len = sizeof err;
  if (::getsockopt(fd_.get(), SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err != 0) ++io_.socket_errors;
  return err;
}

void Port::update_socket_stats() {
  tpacket_stats st{};
  socklen_t len = sizeof st;
  if (::getsockopt(fd_.get(), SOL_PACKET, PACKET_STATISTICS, &st, &len) == 0) io_.rx_socket_drops += st.tp_drops;
}

void Port::deliver(PacketPtr p, xcp::Timestamp /*at*/) {
  tx_[tx_count_] = std::move(p);
  ++tx_count_;
  if (tx_count_ == kBatch) flush();
}

void Port::flush() {
  size_t sent = 0;
  for (size_t i = 0; i < tx_count_; ++i) {
    tx_iov_[i].iov_base = tx_[i]->data();
    tx_iov_[i].iov_len = tx_[i]->frame_len;
  }
  while (sent < tx_count_) {
    ++io_.tx_syscalls;
    const int n = ::sendmmsg(fd_.get(), tx_msgs_.data() + sent, static_cast<unsigned>(tx_count_ - sent), MSG_DONTWAIT);
    if (n <= 0) {
      // The kernel refused the head frame (buffer full, link down): drop it, go on.
      ++io_.tx_errors;
      ++sent;
      continue;
    }
    sent += static_cast<size_t>(n);
  }
  for (size_t i = 0; i < tx_count_; ++i) tx_[i].reset();
  tx_count_ = 0;
}

}  // namespace xcprouter
