// The object schedule of `xcpperf --objects` (web-like short flows, issue 17):
// a list "t0:bytes,t1:bytes,..." or "@FILE" holding the same list (commas,
// spaces or newlines between entries). `t` is the object's start offset in
// seconds from the client's start, `bytes` its payload size; one connection
// per object. Parsed once at the command-line edge into typed entries.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "xcp/units.hh"

namespace xcphost {

// Bounds: objects per process (each one takes a local port, and the list is
// passed on one command line: 4096 x ~16 characters stays under the kernel's
// 128 KiB per argument), bytes per object, and the size of an @FILE.
inline constexpr size_t kMaxObjects = 4096;
inline constexpr uint64_t kMaxObjectBytes = uint64_t{1} << 30;
inline constexpr size_t kMaxScheduleFileBytes = size_t{1} << 20;
// Offsets past a day are typing mistakes, not schedules.
inline constexpr double kMaxObjectStartS = 86400;

struct ObjectSpec {
  xcp::Duration start;  // from the client's start
  uint64_t bytes = 0;   // payload (the 16-byte session preamble comes on top)
};

// The entries in start order, or a message naming the bad entry.
using ParsedSchedule = std::variant<std::vector<ObjectSpec>, std::string>;
ParsedSchedule parse_object_list(std::string_view text);
// `spec` is a list or "@FILE" (read here, bounded by kMaxScheduleFileBytes).
ParsedSchedule parse_object_schedule(std::string_view spec);

}  // namespace xcphost
