// One row of the bound table shared with the spec validator (xcplab_contract/bounds.json;
// the rows are generated into contract_bounds.hh at build time). A closed range
// [lo, hi] in `unit`, with why the limit is where it is, shown in every refusal.
#pragma once

#include <cmath>
#include <cstdio>
#include <string>

namespace xcprouter {

struct Bound {
  double lo;
  double hi;
  bool integer;      // whole numbers only
  const char* unit;  // "bps", "s", "B", "pkts" or "" (how lo/hi read)
  const char* why;
  const char* name;  // the table's key, e.g. "link.capacity_bps"

  bool contains(double x) const { return x >= lo && x <= hi && (!integer || std::floor(x) == x); }

  // "[0.001, 10] s (why)": what error messages append after the bad value.
  std::string describe() const {
    char buf[80];
    std::snprintf(buf, sizeof buf, "%s[%.10g, %.10g]%s%s", integer ? "an integer in " : "", lo, hi,
                  *unit ? " " : "", unit);
    return std::string(buf) + " (" + why + ")";
  }
};

}  // namespace xcprouter
