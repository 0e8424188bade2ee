// `xcpperf --objects`: the schedule's parser (entries, order, bounds, @FILE)
// and the options that go with it.
#include "app/object_schedule.hh"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <variant>

#include "app/options.hh"

namespace xcphost {
namespace {

std::string error_of(const ParsedSchedule& p) {
  const auto* e = std::get_if<std::string>(&p);
  return e ? *e : std::string();
}

TEST(ObjectSchedule, ParsesEntriesInStartOrderWithAnySeparator) {
  const auto p = parse_object_list("0:1000, 0.25:14600\n0.25:1\t2.5:1048576,");
  ASSERT_TRUE(std::holds_alternative<std::vector<ObjectSpec>>(p)) << error_of(p);
  const auto& v = std::get<std::vector<ObjectSpec>>(p);
  ASSERT_EQ(v.size(), 4u);
  EXPECT_EQ(v[0].start, xcp::Duration::zero());
  EXPECT_EQ(v[0].bytes, 1000u);
  EXPECT_EQ(v[1].start, xcp::Duration::milliseconds(250));
  EXPECT_EQ(v[3].start, xcp::Duration::milliseconds(2500));
  EXPECT_EQ(v[3].bytes, 1048576u);
}

TEST(ObjectSchedule, NamesTheBadEntryAndWhy) {
  struct Case {
    const char* text;
    const char* says;
  };
  for (const Case& c : {Case{"0:10,0.5", "object 2 ('0.5'): expected START_S:BYTES"},
                        Case{"-1:10", "object 1 ('-1:10'): start must be seconds"},
                        Case{"x:10", "start must be seconds"},
                        Case{"0:0", "object 1 ('0:0'): bytes must be an integer in 1.."},
                        Case{"0:12KB", "bytes must be an integer"},
                        Case{"0:2000000000", "bytes must be an integer in 1..1073741824"},
                        Case{"1:10,0.5:10", "object 2 ('0.5:10'): starts before object 1; list objects in start order"},
                        Case{"", "no objects"},
                        Case{" , ", "no objects"}}) {
    const std::string err = error_of(parse_object_list(c.text));
    EXPECT_NE(err.find(c.says), std::string::npos) << c.text << " -> " << err;
  }
}

TEST(ObjectSchedule, RefusesMoreObjectsThanTheBound) {
  std::string text;
  for (size_t i = 0; i <= kMaxObjects; ++i) text += "0:1,";
  EXPECT_NE(error_of(parse_object_list(text)).find("more than 4096 objects"), std::string::npos);
  text.resize(text.size() - 4);  // exactly the bound
  EXPECT_TRUE(std::holds_alternative<std::vector<ObjectSpec>>(parse_object_list(text)));
}

TEST(ObjectSchedule, ReadsAFileAndNamesItInErrors) {
  const std::string path = ::testing::TempDir() + "xcpperf_objects.txt";
  {
    std::ofstream f(path);
    f << "0:100\n0.1:200\n";
  }
  const auto ok = parse_object_schedule("@" + path);
  ASSERT_TRUE(std::holds_alternative<std::vector<ObjectSpec>>(ok)) << error_of(ok);
  EXPECT_EQ(std::get<std::vector<ObjectSpec>>(ok).size(), 2u);
  {
    std::ofstream f(path);
    f << "0:100\nbad\n";
  }
  EXPECT_EQ(error_of(parse_object_schedule("@" + path)), path + ": object 2 ('bad'): expected START_S:BYTES");
  std::remove(path.c_str());
  EXPECT_NE(error_of(parse_object_schedule("@" + path)).find("cannot read object schedule file"), std::string::npos);
}

TEST(ObjectSchedule, OptionsTakeTheScheduleAndRefuseMixedModes) {
  const auto p = parse_options({"-c", "10.0.0.2", "--objects", "0:10,1:20", "--max-concurrent", "4", "-t", "5"});
  ASSERT_TRUE(std::holds_alternative<Options>(p)) << std::get<std::string>(p);
  const Options& o = std::get<Options>(p);
  EXPECT_EQ(o.objects.size(), 2u);
  EXPECT_EQ(o.max_concurrent, 4u);
  EXPECT_TRUE(o.time_given);
  auto err = [](std::vector<std::string_view> a) {
    const auto r = parse_options(a);
    return std::holds_alternative<std::string>(r) ? std::get<std::string>(r) : std::string();
  };
  EXPECT_EQ(err({"-c", "10.0.0.2", "--objects", "0:x"}),
            "--objects: object 1 ('0:x'): bytes must be an integer in 1..1073741824");
  EXPECT_NE(err({"-c", "10.0.0.2", "--objects", "0:10", "-n", "100"}).find("without -n, -P or -s"),
            std::string::npos);
  EXPECT_NE(err({"-c", "10.0.0.2", "--objects", "0:10", "-P", "2"}).find("without -n, -P or -s"), std::string::npos);
  EXPECT_EQ(err({"-c", "10.0.0.2", "--objects", "0:10", "--max-concurrent", "0"}),
            "--max-concurrent: expected an integer in 1..1024");
}

}  // namespace
}  // namespace xcphost
