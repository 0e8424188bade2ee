// xcpperf command line, parsed once into a typed struct.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "app/object_schedule.hh"
#include "cc/congestion_controller.hh"
#include "transport/loss_recovery.hh"
#include "xcp/units.hh"

namespace xcphost {

// Exit codes (also in host-image/README.md).
inline constexpr int kExitOk = 0;
inline constexpr int kExitError = 1;          // runtime error: connection lost/reset, socket failure
inline constexpr int kExitUsage = 2;          // bad command line
inline constexpr int kExitConnectFailed = 3;  // no answer to SYN, or refused (RST)
inline constexpr int kExitVerifyFailed = 4;   // --verify: payload mismatch

// Send buffer bytes one client process holds across its -P streams when -w is
// not given: each stream gets min(16 MiB, this / P). Every byte of it is
// written (ClientStream fills what fits), so 1024 streams x 16 MiB would be
// 16 GiB to allocate and fill before the handshakes are served (they failed:
// "no answer to SYN", then the server's idle timeout). 256 MiB keeps 16 MiB for
// up to 16 streams and 256 KiB each at 1024 (a 1 Gb/s link's 1/1024 share
// for RTTs up to 2 s).
inline constexpr uint64_t kClientSendBudgetBytes = uint64_t{256} << 20;
// Bound on the ports one server listens on (-p list): each is one range of its
// kernel port filter (io/raw_socket.hh kMaxFilterPortRanges).
inline constexpr size_t kMaxServerPorts = 32;
// Bound on -w x -P (what the process allocates and fills for send buffers).
inline constexpr uint64_t kMaxClientSendBytes = uint64_t{4} << 30;

struct Options {
  enum class Mode { kServer, kClient };
  Mode mode = Mode::kClient;
  uint16_t port = 5201;
  // Server: every port it listens on (-p P1,P2,...: one process serving several flows
  // that share a host and options); ports[0] == port. At most kMaxServerPorts.
  std::vector<uint16_t> ports;
  std::string host;                  // client: server address (dotted quad)
  uint32_t host_addr = 0;            // host byte order
  xcp::Duration duration = xcp::Duration::seconds(10);
  std::optional<uint64_t> bytes;     // -n: bytes per stream instead of a duration
  uint32_t parallel = 1;
  CcKind cc = CcKind::kXcp;
  LossRecovery loss_recovery = LossRecovery::kSack;
  xcp::Rate rate = xcp::Rate::zero();  // XCP desired rate; zero = unlimited
  xcp::Duration interval = xcp::Duration::seconds(1);  // 0 = no interval reports
  bool verify = false;
  bool json = false;
  bool json_stream = false;
  bool one_off = false;
  bool install_icmp_filter = false;
  // Attach the kernel filter: only segments to our ports (io/raw_socket.hh).
  bool port_filter = true;
  // Frames through a packet socket where a link path exists (io/tx_batch.hh), --link-tx.
  // Off by default: in fig2c (15 s) the engine's receive ring overflowed with it, 29 and
  // 33 frames (rx_socket_drops, unfaithful), and never without it (0 and 0, alternated).
  bool link_tx = false;
  // Send and receive this process's frames through an AF_XDP socket on one
  // interface (io/xdp_socket.hh), --xdp [--xdp-dev IF]. Empty xdp_dev: the
  // client's route to -c HOST, the server's one non-loopback interface.
  bool xdp = false;
  std::string xdp_dev;
  bool delayed_ack = true;
  bool rto_backoff_until_new_data = false;  // --rto-backoff new-data
  bool xcp_feedback_new_acks_only = false;  // --xcp-feedback new-acks
  uint32_t mss = 0;                  // 0 = default (MTU 1500)
  uint64_t window_bytes = 0;         // send buffer per stream; 0 = default
  uint16_t cport = 0;                // first local port (client); 0 = random
  // SYNs at 0, 1, 3, 7 and 15 s (RTO 1 s, doubled), then give up at 31 s. 5 s
  // (three SYNs) lost whole 20-stream FTP pairs on seed 003's congested 4 Mb/s
  // drop-tail leaves, where one handshake in 20 can lose three attempts; Linux
  // tries for ~127 s (tcp_syn_retries 6).
  xcp::Duration connect_timeout = xcp::Duration::seconds(31);
  uint8_t ttl = 0;
  xcp::Duration idle_timeout = xcp::Duration::seconds(30);
  bool xcpi = false;                 // send the XCP-i block (docs/protocol.md §4)
  // Nonzero: the XCP-i receiver duty with this cloud-path capacity (src/xcpi/receiver_xcpi.hh).
  xcp::Rate xcpi_receiver_cloud = xcp::Rate::zero();
  // Nonzero: the same duty with the chirp estimator, H = this rate (the access link).
  xcp::Rate xcpi_receiver_chirp = xcp::Rate::zero();
  std::optional<uint32_t> ixcp_link_id;  // send the iXCP block with this access-link id
  std::string title;                 // copied into the JSON start section
  bool time_given = false;           // -t was given (with --objects: the schedule's deadline)
  std::vector<ObjectSpec> objects;   // --objects: one connection per object (app/objects_client.hh)
  uint32_t max_concurrent = 32;      // --max-concurrent: object connections open at once
};

// Either options or a usage error message.
using ParsedOptions = std::variant<Options, std::string>;
ParsedOptions parse_options(const std::vector<std::string_view>& args);
std::string_view usage_text();

// --job NAME: several clients (flows: --objects, or bulk -t/-n) in one process, sharing
// its socket and I/O loop; each job reports its own events, tagged {"job": NAME}:
//   xcpperf [options for all] --job NAME -c HOST -p PORT [--objects SPEC] [options] --job ...
// Each job's options are the common ones followed by its own. Bounds: kMaxJobs jobs,
// kMaxJobObjects objects and bulk streams in all (each has its own local port).
struct Job {
  std::string name;
  Options options;
};
inline constexpr size_t kMaxJobs = 16;
inline constexpr size_t kMaxJobObjects = 32768;
using ParsedJobs = std::variant<std::vector<Job>, std::string>;
// The jobs of a command line with --job (an error message when they are invalid).
ParsedJobs parse_jobs(const std::vector<std::string_view>& args);

}  // namespace xcphost
