#include "hologram/support/diagnostics.h"

#include <gtest/gtest.h>

#include <sstream>

using namespace hologram;

TEST(Diagnostics, TextFormatHasFileLineColumnAndNotes) {
  DiagnosticEngine d;
  d.error("k.hasm", {3, 7}, "bad thing", {"did you mean 'good'?"});
  EXPECT_TRUE(d.has_errors());
  EXPECT_EQ(d.to_string(), "k.hasm:3:7: error: bad thing\n  note: did you mean 'good'?\n");
}

TEST(Diagnostics, JsonFormatIsOneObjectPerLine) {
  DiagnosticEngine d;
  d.warning("a.json", {1, 2}, "lossy");
  std::ostringstream os;
  d.print(os, DiagnosticsFormat::Json);
  EXPECT_EQ(os.str(),
            R"({"column":2,"file":"a.json","line":1,"message":"lossy","severity":"warning"})"
            "\n");
  EXPECT_FALSE(d.has_errors());
}

TEST(Diagnostics, WarningsAsErrors) {
  DiagnosticEngine d;
  d.set_warnings_as_errors(true);
  d.warning("f", {1, 1}, "w");
  EXPECT_TRUE(d.has_errors());
}

TEST(Diagnostics, ClosestMatch) {
  EXPECT_EQ(closest_match("sqtr", {"sqrt", "exp", "log"}), "sqrt");
  EXPECT_EQ(closest_match("zzzzzz", {"sqrt", "exp"}), "");
}
