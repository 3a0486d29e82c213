// Status and Expected, the error values of library boundaries, and how an error about a place
// in a program becomes a diagnostic.
#include "hologram/isa/program.h"
#include "hologram/support/expected.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

using namespace hologram;

TEST(Expected, HoldsAValueOrTheStatusSayingWhyNot) {
  Expected<std::string> value = std::string("bytes");
  ASSERT_TRUE(value);
  EXPECT_EQ(*value, "bytes");
  EXPECT_TRUE(value.status().is_ok());
  EXPECT_EQ(value.message(), "");

  Expected<std::string> error = Status{ErrorCode::InvalidModule, "damaged"};
  EXPECT_FALSE(error);
  EXPECT_EQ(error.status().code(), ErrorCode::InvalidModule);
  EXPECT_EQ(error.message(), "damaged");

  // A move-only value moves out.
  Expected<std::unique_ptr<int>> owned = std::make_unique<int>(7);
  std::unique_ptr<int> taken = std::move(*owned);
  EXPECT_EQ(*taken, 7);
}

TEST(Expected, AnOkStatusIsNoValueButAnInternalError) {
  Expected<int> wrong = Status::ok();
  EXPECT_FALSE(wrong);
  EXPECT_EQ(wrong.status().code(), ErrorCode::Internal);
}

TEST(Status, AnErrorAtAPlaceDescribesItselfAsADiagnostic) {
  isa::Kernel k;
  k.name = "scale";
  Status st = isa::kernel_error(ErrorCode::InvalidProgram, "scale.hasm", k, {6, 3},
                                "'atom' cannot run here");
  EXPECT_EQ(st.code(), ErrorCode::InvalidProgram);
  EXPECT_EQ(st.message(), "'atom' cannot run here");
  ASSERT_NE(st.diagnostic(), nullptr);
  EXPECT_EQ(st.diagnostic()->kernel, "scale");
  EXPECT_EQ(st.describe(),
            "scale.hasm:6:3: error: 'atom' cannot run here\n  note: in kernel 'scale'");

  Status plain{ErrorCode::InvalidArgument, "no target"};
  EXPECT_EQ(plain.diagnostic(), nullptr);
  EXPECT_EQ(plain.describe(), "no target");
}

TEST(Status, ReportFillsInTheFileAStageDidNotKnow) {
  isa::Kernel k;
  k.name = "w";
  DiagnosticEngine diags;
  report(diags, isa::kernel_error(ErrorCode::InvalidProgram, "", k, {2, 1}, "unsupported"),
         "w.hasm");
  report(diags, Status{ErrorCode::Internal, "linking failed"}, "w.hasm");
  report(diags, Status::ok(), "w.hasm");
  EXPECT_EQ(diags.error_count(), 2u);
  EXPECT_EQ(diags.to_string(), "w.hasm:2:1: error: unsupported\n  note: in kernel 'w'\n"
                               "w.hasm: error: linking failed\n");
}
