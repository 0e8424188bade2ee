// Everything one xcpperf process needs to talk: clock, raw socket, send and
// receive batches, the endpoint and its I/O loop, built from the options.
#pragma once

#include "app/io_loop.hh"
#include "app/options.hh"
#include "io/raw_socket.hh"
#include "io/rx_batch.hh"
#include "io/tx_batch.hh"
#include "transport/connection_config.hh"
#include "transport/endpoint.hh"
#include "xcp/clock.hh"

namespace xcphost {

ConnectionConfig connection_config(const Options& o);

struct HostStack {
  explicit HostStack(const Options& o);
  xcp::MonotonicClock clock;
  RawSocket sock;
  TxBatch tx;
  RxBatch rx;
  Endpoint ep;
  IoLoop loop;
};

}  // namespace xcphost
