// JSON kernels: typing and flow rules that are easier to state in C++ than in golden files.
#include "hologram/frontend/json.h"
#include "hologram/interp/interpreter.h"

#include <gtest/gtest.h>

using namespace hologram;

namespace {
std::string kernel(const std::string &params, const std::string &body,
                   const char *version = "1.1") {
  return std::string(R"({"version":")") + version + R"(","kernel":{"name":"k","params":[)" +
         params + R"(],"body":[)" + body + "]}}";
}
const std::string kOut =
    R"({"name":"out","type":{"kind":"device_array","element_type":{"kind":"scalar","type":"i32"}}})";
std::string lit(int v) {
  return R"({"type":"literal","value":)" + std::to_string(v) + "}";
}
std::string var(const std::string &n) {
  return R"({"type":"var","name":")" + n + R"("})";
}
std::string let(const std::string &n, const std::string &v) {
  return R"({"type":"let","name":")" + n + R"(","value":)" + v + "}";
}
std::string store0(const std::string &v) {
  return R"({"type":"assign","target":{"type":"index","array":{"type":"var","name":"out"},"index":)" +
         lit(0) + R"(},"value":)" + v + "}";
}

int32_t run_one(const std::string &doc) {
  DiagnosticEngine d;
  auto m = frontend::compile_json(doc, "t.json", d);
  EXPECT_TRUE(m) << d.to_string();
  if (!m) return INT32_MIN;
  std::vector<int32_t> out(1);
  interp::AtlasState atlas;
  std::vector<interp::ArgValue> args = {interp::ArgValue::buffer_of(out)};
  auto st = interp::run_kernel(m->kernels[0], {}, args, atlas);
  EXPECT_TRUE(st.is_ok()) << st.message();
  return out[0];
}
} // namespace

TEST(JsonFrontend, AssignedOnBothBranchesIsDefinitelyAssigned) {
  std::string body = R"({"type":"if","condition":{"type":"literal","value":true},"then_body":[)" +
                     let("x", lit(4)) + R"(],"else_body":[)" + let("x", lit(5)) + "]}," +
                     store0(var("x"));
  EXPECT_EQ(run_one(kernel(kOut, body)), 4);
}

TEST(JsonFrontend, LoopVariableIsVisibleAfterTheLoop) {
  std::string body = R"({"type":"for","var":"i","start":)" + lit(0) + R"(,"stop":)" + lit(7) +
                     R"(,"step":)" + lit(2) + R"(,"body":[]},)" + store0(var("i"));
  EXPECT_EQ(run_one(kernel(kOut, body)),
            8); // Python leaves i at its last value; here the exit value
}

TEST(JsonFrontend, IntegerDivisionAndModulo) {
  auto op = [&](const char *o, int a, int b) {
    std::string e = R"({"type":"binary_op","op":")" + std::string(o) + R"(","left":)" + lit(a) +
                    R"(,"right":)" + lit(b) + "}";
    return run_one(kernel(kOut, store0(e)));
  };
  EXPECT_EQ(op("div", -7, 2), -3);       // C: truncates toward zero
  EXPECT_EQ(op("mod", -7, 2), -1);       // sign of the dividend
  EXPECT_EQ(op("floor_div", -7, 2), -4); // floors
  EXPECT_EQ(op("floor_div", 7, -2), -4);
  EXPECT_EQ(op("floor_div", 7, 2), 3);
  // Exact divisors need no adjustment whatever the signs.
  EXPECT_EQ(op("floor_div", 6, -3), -2);
  EXPECT_EQ(op("floor_div", -6, -3), 2);
  EXPECT_EQ(op("floor_div", -6, 3), -2);
  EXPECT_EQ(op("floor_div", 0, -3), 0);
  EXPECT_EQ(op("floor_div", -7, -3), 2);
  EXPECT_EQ(op("floor_div", 7, 0), 0);
  EXPECT_EQ(op("floor_div", INT32_MIN, -1), INT32_MIN);
  EXPECT_EQ(op("div", 7, 0), 0); // division by zero gives 0
}

TEST(JsonFrontend, WarningsBecomeErrorsWithWerror) {
  std::string f32 = R"({"name":"f","type":{"kind":"scalar","type":"f32"}})";
  std::string doc = kernel(kOut + "," + f32, store0(var("f")));
  DiagnosticEngine d;
  EXPECT_TRUE(frontend::compile_json(doc, "t.json", d));
  ASSERT_EQ(d.diagnostics().size(), 1u);
  EXPECT_EQ(d.diagnostics()[0].severity, Severity::Warning);
  DiagnosticEngine strict;
  strict.set_warnings_as_errors(true);
  EXPECT_FALSE(frontend::compile_json(doc, "t.json", strict));
}

TEST(JsonFrontend, DeeplyNestedInputIsAnErrorNotACrash) {
  std::string deep(100000, '[');
  DiagnosticEngine d;
  EXPECT_FALSE(frontend::compile_json(deep, "deep.json", d));
  EXPECT_TRUE(d.has_errors());
}

TEST(JsonFrontend, DeeplyNestedValidDocumentIsAnError) {
  std::string e = lit(1);
  for (int i = 0; i < 5000; ++i) e = R"({"type":"unary_op","op":"neg","operand":)" + e + "}";
  DiagnosticEngine d;
  EXPECT_FALSE(frontend::compile_json(kernel(kOut, store0(e)), "deep.json", d));
  EXPECT_NE(d.to_string().find("more than 200 levels deep"), std::string::npos)
      << d.to_string().substr(0, 300);
}
