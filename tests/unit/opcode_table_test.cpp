// The opcode table (src/ptx/opcodes.inc): names map to opcodes and back,
// every instruction it marks missing is refused at compile time naming
// itself, and README.md lists each of those.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "ptx/opcode.h"
#include "ptx/program.h"

using namespace cucpu::ptx;

namespace {

std::string read_readme() {
  std::ifstream f(CUCPU_README);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// A kernel whose one instruction is `text` (its operands need not make sense:
// a missing instruction is refused before its operands are read).
std::string kernel_with(const std::string& text) {
  return ".version 8.0\n.target sm_90\n.address_size 64\n"
         ".visible .entry k(.param .u64 p)\n{\n.reg .b32 %r<4>;\n.reg .b64 %rd<4>;\n" +
         text + "\nret;\n}\n";
}

}  // namespace

TEST(OpcodeTable, NamesRoundTrip) {
  for (int i = 0; i < static_cast<int>(Op::kCount); ++i) {
    const Op op = static_cast<Op>(i);
    Op back = Op::kCount;
    ASSERT_TRUE(op_from_name(op_name(op), &back)) << op_name(op);
    EXPECT_EQ(back, op);
  }
  Op out = Op::kCount;
  EXPECT_FALSE(op_from_name("addx", &out));
  EXPECT_FALSE(op_from_name("", &out));
  EXPECT_FALSE(op_from_name("zzz", &out));
  EXPECT_EQ(out, Op::kCount);
}

TEST(OpcodeTable, FactsAgreeWithFamilies) {
  for (int i = 0; i < static_cast<int>(Op::kCount); ++i) {
    const Op op = static_cast<Op>(i);
    // Every collective is a cut; rematerializable instructions compute a value.
    if (op_info(op).family == Family::kCollective) EXPECT_TRUE(op_has(op, kCut)) << op_name(op);
    if (op_has(op, kRemat) || op_has(op, kAffine)) EXPECT_TRUE(op_has(op, kDest)) << op_name(op);
  }
}

TEST(OpcodeTable, MissingInstructionsAreRefusedByName) {
  for (int i = 0; i < static_cast<int>(Op::kCount); ++i) {
    const Op op = static_cast<Op>(i);
    if (op_info(op).family != Family::kMissing) continue;
    std::string log;
    auto p = Program::parse(kernel_with(op_name(op) + ".x %r1, %r2;"), &log);
    ASSERT_TRUE(p) << op_name(op) << ": " << log;  // in the ISA: the parser takes it
    EXPECT_FALSE(p->kernel(p->find_entry("k"), &log)) << op_name(op);
    EXPECT_NE(log.find("unsupported instruction '" + op_name(op)), std::string::npos) << log;
    EXPECT_NE(log.find("cucpu compiles no form of '" + op_name(op) + "'"), std::string::npos) << log;
  }
}

TEST(OpcodeTable, UnknownNamesAreMalformedPtx) {
  std::string log;
  EXPECT_FALSE(Program::parse(kernel_with("frobnicate.b32 %r1, %r2;"), &log));
  EXPECT_NE(log.find("unknown instruction 'frobnicate'"), std::string::npos) << log;
}

TEST(OpcodeTable, ReadmeListsEveryMissingInstruction) {
  const std::string readme = read_readme();
  ASSERT_FALSE(readme.empty());
  for (int i = 0; i < static_cast<int>(Op::kCount); ++i) {
    const Op op = static_cast<Op>(i);
    if (op_info(op).family != Family::kMissing) continue;
    EXPECT_NE(readme.find("`" + op_name(op) + "`"), std::string::npos) << op_name(op) << " is missing from README.md";
  }
}
