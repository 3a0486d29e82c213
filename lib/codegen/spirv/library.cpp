// The device library of the SPIR-V backends: whole-launch instructions as kernels written in
// the Atlas ISA (instantiated per element type). The runtime plans their launches
// (runtime/core/library_plan.cpp).
//
// Schedules: gemm and batched_gemm use 16x16 tiles staged in shared memory; softmax,
// log_softmax, layernorm and rmsnorm give each row one block of 256 lanes that reduce in
// shared memory; reduce_all and dot reduce in two stages (256 blocks, then one); the others
// give each output element (or row, for gemv and attention) one lane. Sums and products are
// accumulated in f64 and rounded once, like the reference implementations.
#include "hologram/codegen/spirv_library.h"

#include "hologram/isa/text.h"
#include "hologram/isa/verifier.h"
#include "hologram/support/diagnostics.h"
#include "hologram/support/unreachable.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <set>
#include <sstream>

namespace hologram::codegen {

namespace {

using namespace isa;

constexpr std::string_view kPrefix = kSpirvLibraryPrefix;
using spirv_library::kRowBlock;

std::string replace_all(std::string s, const std::string &from, const std::string &to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
  return s;
}

/// A tree reduction of the f64/T value in `val` over the block's 256 lanes into `out` (every
/// lane gets it). Needs r90 = lane * size (u64), r94 = size (u64), r97 = 1, r98 = 0 (u32).
std::string tree(const std::string &label, const std::string &op, const std::string &type,
                 const std::string &val, const std::string &out) {
  std::string t = R"(
  sts.TY         [shared + r90], VAL
  bar.sync       0
  mov.imm.u32    r91, 128
@L_red:
  setlt.u32      p10, %lane.x, r91
  bra !p10       @L_skip
  add.u32        r92, %lane.x, r91
  cvt.u64.u32    r93, r92
  mul.u64        r93, r93, r94
  lds.TY         r95, [shared + r93]
  lds.TY         r96, [shared + r90]
  OP.TY          r96, r96, r95
  sts.TY         [shared + r90], r96
@L_skip:
  bar.sync       0
  shr.u32        r91, r91, r97
  setne.u32      p11, r91, r98
  bra p11        @L_red
  lds.TY         OUT, [shared]
  bar.sync       0
)";
  t = replace_all(t, "@L_", "@" + label + "_");
  t = replace_all(t, "TY", type);
  t = replace_all(t, "VAL", val);
  t = replace_all(t, "OUT", out);
  return replace_all(t, "OP", op);
}

std::string tree_setup(unsigned size) {
  return "  cvt.u64.u32    r90, %lane.x\n  mov.imm.u64    r94, " + std::to_string(size) +
         "\n  mul.u64        r90, r90, r94\n  mov.imm.u32    r97, 1\n  mov.imm.u32    r98, 0\n";
}

// ---------------------------------------------------------------------------------------------
// Kernel texts ($TY element type, $SZ its size)

const char *kGemm = R"(.kernel __hg_gemm_$TY
.param %C : buffer<$TY> readwrite
.param %A : buffer<$TY> read
.param %B : buffer<$TY> read
.param %M : u64
.param %N : u64
.param %K : u64
.param %alpha : f64
.param %beta : f64
.param %lda : u64
.param %ldb : u64
.param %ldc : u64
.param %sa : u64
.param %sb : u64
.param %sc : u64
.param %ta : u32
.param %tb : u32
.shared 4096
  param.u64      r1, %M
  param.u64      r2, %N
  param.u64      r3, %K
  param.u64      r4, %lda
  param.u64      r5, %ldb
  param.u64      r6, %ldc
  param.u32      r7, %ta
  param.u32      r8, %tb
  mov.imm.u32    r9, 0
  setne.u32      p5, r7, r9
  setne.u32      p6, r8, r9
  cvt.u64.u32    r10, %lane.x
  cvt.u64.u32    r11, %lane.y
  cvt.u64.u32    r12, %block.x
  cvt.u64.u32    r13, %block.y
  cvt.u64.u32    r14, %block.z
  mov.imm.u64    r15, 16
  mul.u64        r16, r13, r15
  add.u64        r16, r16, r11
  mul.u64        r17, r12, r15
  add.u64        r17, r17, r10
  param.u64      r18, %sa
  mul.u64        r18, r18, r14
  param.u64      r19, %sb
  mul.u64        r19, r19, r14
  mul.u64        r21, r11, r15
  add.u64        r21, r21, r10
  mov.imm.u64    r60, 8
  mul.u64        r21, r21, r60
  mov.imm.u64    r61, 2048
  add.u64        r31, r21, r61
  mov.imm.f64    r20, 0.0
  mov.imm.u64    r22, 0
@tile:
  setge.u64      p0, r22, r3
  bra p0         @tiles_done
  add.u64        r23, r22, r10
  mov.imm.f64    r24, 0.0
  setlt.u64      p1, r16, r1
  setlt.u64      p2, r23, r3
  pand           p1, p1, p2
  bra !p1        @a_skip
  mul.u64        r25, r23, r4
  add.u64        r25, r25, r16
  mul.u64        r26, r16, r4
  add.u64        r26, r26, r23
  sel.u64        r27, p5, r25, r26
  add.u64        r27, r27, r18
  ld.$TY          r28, [%A + r27*$SZ]
  cvt.f64.$TY     r24, r28
@a_skip:
  sts.f64        [shared + r21], r24
  add.u64        r29, r22, r11
  mov.imm.f64    r30, 0.0
  setlt.u64      p1, r29, r3
  setlt.u64      p2, r17, r2
  pand           p1, p1, p2
  bra !p1        @b_skip
  mul.u64        r32, r17, r5
  add.u64        r32, r32, r29
  mul.u64        r33, r29, r5
  add.u64        r33, r33, r17
  sel.u64        r34, p6, r32, r33
  add.u64        r34, r34, r19
  ld.$TY          r35, [%B + r34*$SZ]
  cvt.f64.$TY     r30, r35
@b_skip:
  sts.f64        [shared + r31], r30
  bar.sync       0
  mov.imm.u64    r36, 0
@inner:
  mul.u64        r37, r11, r15
  add.u64        r37, r37, r36
  mul.u64        r37, r37, r60
  mul.u64        r38, r36, r15
  add.u64        r38, r38, r10
  mul.u64        r38, r38, r60
  add.u64        r38, r38, r61
  lds.f64        r39, [shared + r37]
  lds.f64        r40, [shared + r38]
  mul.f64        r41, r39, r40
  add.f64        r20, r20, r41
  mov.imm.u64    r42, 1
  add.u64        r36, r36, r42
  setlt.u64      p4, r36, r15
  bra p4         @inner
  bar.sync       0
  add.u64        r22, r22, r15
  bra            @tile
@tiles_done:
  setlt.u64      p1, r16, r1
  setlt.u64      p2, r17, r2
  pand           p1, p1, p2
  bra !p1        @done
  param.u64      r43, %sc
  mul.u64        r43, r43, r14
  mul.u64        r44, r16, r6
  add.u64        r44, r44, r17
  add.u64        r44, r44, r43
  param.f64      r45, %alpha
  param.f64      r46, %beta
  mul.f64        r47, r45, r20
  mov.imm.f64    r48, 0.0
  seteq.f64      p3, r46, r48
  bra p3         @store
  ld.$TY          r49, [%C + r44*$SZ]
  cvt.f64.$TY     r50, r49
  mul.f64        r50, r46, r50
  add.f64        r47, r47, r50
@store:
  cvt.$TY.f64     r51, r47
  st.$TY          [%C + r44*$SZ], r51
@done:
  exit
)";

const char *kGemv = R"(.kernel __hg_gemv_$TY
.param %y : buffer<$TY> readwrite
.param %A : buffer<$TY> read
.param %x : buffer<$TY> read
.param %rows : u64
.param %cols : u64
.param %alpha : f64
.param %beta : f64
.param %lda : u64
.param %tr : u32
  param.u64      r1, %rows
  setge.u64      p0, %gid, r1
  bra p0         @done
  param.u64      r2, %cols
  param.u64      r3, %lda
  param.u32      r4, %tr
  mov.imm.u32    r5, 0
  setne.u32      p1, r4, r5
  mov.imm.f64    r6, 0.0
  mov.imm.u64    r7, 0
  mov.imm.u64    r8, 1
@loop:
  setge.u64      p2, r7, r2
  bra p2         @end
  mul.u64        r9, r7, r3
  add.u64        r9, r9, %gid
  mul.u64        r10, %gid, r3
  add.u64        r10, r10, r7
  sel.u64        r11, p1, r9, r10
  ld.$TY          r12, [%A + r11*$SZ]
  ld.$TY          r13, [%x + r7*$SZ]
  cvt.f64.$TY     r14, r12
  cvt.f64.$TY     r15, r13
  mul.f64        r16, r14, r15
  add.f64        r6, r6, r16
  add.u64        r7, r7, r8
  bra            @loop
@end:
  param.f64      r17, %alpha
  param.f64      r18, %beta
  mul.f64        r19, r17, r6
  mov.imm.f64    r20, 0.0
  seteq.f64      p3, r18, r20
  bra p3         @store
  ld.$TY          r21, [%y + %gid*$SZ]
  cvt.f64.$TY     r22, r21
  mul.f64        r22, r18, r22
  add.f64        r19, r19, r22
@store:
  cvt.$TY.f64     r23, r19
  st.$TY          [%y + %gid*$SZ], r23
@done:
  exit
)";

/// One row per block: the maximum, the sum of exponentials, then the outputs.
const char *kSoftmax = R"(.kernel __hg_softmax_$TY
.param %y : buffer<$TY> write
.param %x : buffer<$TY> read
.param %rows : u64
.param %cols : u64
.param %log : u32
.shared 2048
  param.u64      r1, %rows
  param.u64      r2, %cols
  param.u32      r3, %log
  cvt.u64.u32    r4, %block.x
  setge.u64      p0, r4, r1
  bra p0         @done
  mul.u64        r5, r4, r2
  cvt.u64.u32    r6, %lane.x
  cvt.u64.u32    r7, %bdim.x
$SETUP
  mov.imm.f64    r10, -inf
  mov.u64        r11, r6
@mx:
  setge.u64      p1, r11, r2
  bra p1         @mx_end
  add.u64        r12, r5, r11
  ld.$TY          r13, [%x + r12*$SZ]
  cvt.f64.$TY     r14, r13
  max.f64        r10, r10, r14
  add.u64        r11, r11, r7
  bra            @mx
@mx_end:
$TREE_MAX
  mov.imm.f64    r20, 0.0
  mov.u64        r11, r6
@sum:
  setge.u64      p1, r11, r2
  bra p1         @sum_end
  add.u64        r12, r5, r11
  ld.$TY          r13, [%x + r12*$SZ]
  cvt.f64.$TY     r14, r13
  sub.f64        r16, r14, r15
  exp.f64        r17, r16
  add.f64        r20, r20, r17
  add.u64        r11, r11, r7
  bra            @sum
@sum_end:
$TREE_SUM
  log.f64        r22, r21
  mov.imm.u32    r23, 0
  setne.u32      p2, r3, r23
  mov.u64        r11, r6
@out:
  setge.u64      p1, r11, r2
  bra p1         @done
  add.u64        r12, r5, r11
  ld.$TY          r13, [%x + r12*$SZ]
  cvt.f64.$TY     r14, r13
  sub.f64        r16, r14, r15
  exp.f64        r17, r16
  div.f64        r18, r17, r21
  sub.f64        r19, r16, r22
  sel.f64        r18, p2, r19, r18
  cvt.$TY.f64     r24, r18
  st.$TY          [%y + r12*$SZ], r24
  add.u64        r11, r11, r7
  bra            @out
@done:
  exit
)";

/// layernorm (flags & 1: subtract the mean) and rmsnorm; flags & 2: gamma, flags & 4: beta.
const char *kNorm = R"(.kernel __hg_norm_$TY
.param %y : buffer<$TY> write
.param %x : buffer<$TY> read
.param %gamma : buffer<$TY> read
.param %beta : buffer<$TY> read
.param %rows : u64
.param %cols : u64
.param %eps : f64
.param %flags : u32
.shared 2048
  param.u64      r1, %rows
  param.u64      r2, %cols
  param.u32      r3, %flags
  cvt.u64.u32    r4, %block.x
  setge.u64      p0, r4, r1
  bra p0         @done
  mul.u64        r5, r4, r2
  cvt.u64.u32    r6, %lane.x
  cvt.u64.u32    r7, %bdim.x
$SETUP
  mov.imm.u32    r30, 1
  and.u32        r31, r3, r30
  setne.u32      p3, r31, r98
  mov.imm.u32    r30, 2
  and.u32        r31, r3, r30
  setne.u32      p4, r31, r98
  mov.imm.u32    r30, 4
  and.u32        r31, r3, r30
  setne.u32      p5, r31, r98
  cvt.f64.u64    r16, r2
  mov.imm.f64    r10, 0.0
  mov.u64        r11, r6
@mean:
  setge.u64      p1, r11, r2
  bra p1         @mean_end
  add.u64        r12, r5, r11
  ld.$TY          r13, [%x + r12*$SZ]
  cvt.f64.$TY     r14, r13
  add.f64        r10, r10, r14
  add.u64        r11, r11, r7
  bra            @mean
@mean_end:
$TREE_MEAN
  div.f64        r17, r15, r16
  mov.imm.f64    r18, 0.0
  sel.f64        r17, p3, r17, r18
  mov.imm.f64    r20, 0.0
  mov.u64        r11, r6
@sq:
  setge.u64      p1, r11, r2
  bra p1         @sq_end
  add.u64        r12, r5, r11
  ld.$TY          r13, [%x + r12*$SZ]
  cvt.f64.$TY     r14, r13
  sub.f64        r19, r14, r17
  mul.f64        r19, r19, r19
  add.f64        r20, r20, r19
  add.u64        r11, r11, r7
  bra            @sq
@sq_end:
$TREE_SQ
  div.f64        r22, r21, r16
  param.f64      r23, %eps
  add.f64        r22, r22, r23
  sqrt.f64       r22, r22
  mov.imm.f64    r24, 1.0
  div.f64        r25, r24, r22
  mov.u64        r11, r6
@out:
  setge.u64      p1, r11, r2
  bra p1         @done
  add.u64        r12, r5, r11
  ld.$TY          r13, [%x + r12*$SZ]
  cvt.f64.$TY     r14, r13
  sub.f64        r26, r14, r17
  mul.f64        r26, r26, r25
  ld.$TY          r27, [%gamma + r11*$SZ]
  cvt.f64.$TY     r28, r27
  mul.f64        r29, r26, r28
  sel.f64        r26, p4, r29, r26
  ld.$TY          r32, [%beta + r11*$SZ]
  cvt.f64.$TY     r33, r32
  add.f64        r34, r26, r33
  sel.f64        r26, p5, r34, r26
  cvt.$TY.f64     r35, r26
  st.$TY          [%y + r12*$SZ], r35
  add.u64        r11, r11, r7
  bra            @out
@done:
  exit
)";

/// silu (kind 0), gelu with erf (1), gelu with tanh (2), evaluated in f64.
const char *kAct = R"(.kernel __hg_act_$TY
.param %y : buffer<$TY> write
.param %x : buffer<$TY> read
.param %n : u64
.param %kind : u32
  param.u64      r1, %n
  setge.u64      p0, %gid, r1
  bra p0         @done
  ld.$TY          r2, [%x + %gid*$SZ]
  cvt.f64.$TY     r3, r2
  param.u32      r4, %kind
  mov.imm.f64    r5, 1.0
  mov.imm.f64    r6, 0.5
  mov.imm.u32    r7, 1
  seteq.u32      p1, r4, r7
  bra p1         @gelu
  mov.imm.u32    r7, 2
  seteq.u32      p1, r4, r7
  bra p1         @gelu_tanh
  neg.f64        r8, r3
  exp.f64        r9, r8
  add.f64        r9, r9, r5
  div.f64        r10, r5, r9
  exp.f64        r11, r3
  add.f64        r12, r11, r5
  div.f64        r13, r11, r12
  mov.imm.f64    r14, 0.0
  setge.f64      p2, r3, r14
  sel.f64        r15, p2, r10, r13
  mul.f64        r16, r3, r15
  bra            @store
@gelu:
  mov.imm.f64    r17, 1.4142135623730951
  div.f64        r18, r3, r17
  erf.f64        r19, r18
  add.f64        r19, r19, r5
  mul.f64        r20, r6, r3
  mul.f64        r16, r20, r19
  bra            @store
@gelu_tanh:
  mov.imm.f64    r21, 0.044715
  mul.f64        r22, r21, r3
  mul.f64        r22, r22, r3
  mul.f64        r22, r22, r3
  add.f64        r22, r3, r22
  mov.imm.f64    r23, 0.7978845608028654
  mul.f64        r22, r23, r22
  tanh.f64       r24, r22
  add.f64        r24, r24, r5
  mul.f64        r20, r6, r3
  mul.f64        r16, r20, r24
@store:
  cvt.$TY.f64     r25, r16
  st.$TY          [%y + %gid*$SZ], r25
@done:
  exit
)";

const char *kRope = R"(.kernel __hg_rope_$TY
.param %y : buffer<$TY> write
.param %x : buffer<$TY> read
.param %cs : buffer<$TY> read
.param %sn : buffer<$TY> read
.param %pairs : u64
.param %half : u64
  param.u64      r1, %pairs
  setge.u64      p0, %gid, r1
  bra p0         @done
  param.u64      r2, %half
  div.u64        r3, %gid, r2
  rem.u64        r4, %gid, r2
  add.u64        r5, r2, r2
  mul.u64        r6, r3, r5
  add.u64        r7, r4, r4
  add.u64        r6, r6, r7
  mov.imm.u64    r8, 1
  add.u64        r9, r6, r8
  ld.$TY          r10, [%x + r6*$SZ]
  ld.$TY          r11, [%x + r9*$SZ]
  ld.$TY          r12, [%cs + %gid*$SZ]
  ld.$TY          r13, [%sn + %gid*$SZ]
  cvt.f64.$TY     r14, r10
  cvt.f64.$TY     r15, r11
  cvt.f64.$TY     r16, r12
  cvt.f64.$TY     r17, r13
  mul.f64        r18, r14, r16
  mul.f64        r19, r15, r17
  sub.f64        r18, r18, r19
  mul.f64        r20, r14, r17
  mul.f64        r21, r15, r16
  add.f64        r20, r20, r21
  cvt.$TY.f64     r22, r18
  cvt.$TY.f64     r23, r20
  st.$TY          [%y + r6*$SZ], r22
  st.$TY          [%y + r9*$SZ], r23
@done:
  exit
)";

/// One lane per (head, query): scores, then their exponentials in %scores, then the outputs.
const char *kAttention = R"(.kernel __hg_attention_$TY
.param %out : buffer<$TY> write
.param %q : buffer<$TY> read
.param %k : buffer<$TY> read
.param %v : buffer<$TY> read
.param %mask : buffer<$TY> read
.param %scores : buffer<f64> readwrite
.param %rows : u64
.param %sq : u64
.param %sk : u64
.param %d : u64
.param %scale : f64
.param %flags : u32
  param.u64      r1, %rows
  setge.u64      p0, %gid, r1
  bra p0         @done
  param.u64      r2, %sq
  param.u64      r3, %sk
  param.u64      r4, %d
  param.f64      r5, %scale
  param.u32      r6, %flags
  mov.imm.u32    r7, 0
  mov.imm.u32    r8, 1
  and.u32        r9, r6, r8
  setne.u32      p1, r9, r7
  mov.imm.u32    r8, 2
  and.u32        r9, r6, r8
  setne.u32      p2, r9, r7
  div.u64        r10, %gid, r2
  rem.u64        r11, %gid, r2
  mul.u64        r12, %gid, r4
  min.u64        r13, r3, r2
  sub.u64        r13, r3, r13
  add.u64        r13, r13, r11
  mul.u64        r14, %gid, r3
  mul.u64        r15, r10, r3
  mul.u64        r16, r11, r3
  mov.imm.u64    r17, 1
  mov.imm.u64    r18, 0
  mov.imm.f64    r19, 0.0
  mov.imm.f64    r20, -inf
  mov.u64        r21, r18
@score:
  setge.u64      p3, r21, r3
  bra p3         @score_end
  add.u64        r22, r15, r21
  mul.u64        r22, r22, r4
  mov.f64        r23, r19
  mov.u64        r24, r18
@dot:
  setge.u64      p4, r24, r4
  bra p4         @dot_end
  add.u64        r25, r12, r24
  add.u64        r26, r22, r24
  ld.$TY          r27, [%q + r25*$SZ]
  ld.$TY          r28, [%k + r26*$SZ]
  cvt.f64.$TY     r29, r27
  cvt.f64.$TY     r30, r28
  mul.f64        r31, r29, r30
  add.f64        r23, r23, r31
  add.u64        r24, r24, r17
  bra            @dot
@dot_end:
  mul.f64        r23, r23, r5
  bra !p2        @no_mask
  add.u64        r32, r16, r21
  ld.$TY          r33, [%mask + r32*$SZ]
  cvt.f64.$TY     r34, r33
  add.f64        r23, r23, r34
@no_mask:
  setgt.u64      p5, r21, r13
  pand           p5, p5, p1
  mov.imm.f64    r35, -inf
  sel.f64        r23, p5, r35, r23
  add.u64        r36, r14, r21
  st.f64         [%scores + r36*8], r23
  max.f64        r20, r20, r23
  add.u64        r21, r21, r17
  bra            @score
@score_end:
  mov.imm.f64    r37, inf
  seteq.f64      p6, r20, r37
  mov.imm.f64    r37, -inf
  seteq.f64      p7, r20, r37
  por            p6, p6, p7
  mov.f64        r38, r19
  mov.u64        r21, r18
@exp:
  setge.u64      p3, r21, r3
  bra p3         @exp_end
  add.u64        r36, r14, r21
  ld.f64         r39, [%scores + r36*8]
  sub.f64        r40, r39, r20
  exp.f64        r41, r40
  sel.f64        r41, p6, r19, r41
  st.f64         [%scores + r36*8], r41
  add.f64        r38, r38, r41
  add.u64        r21, r21, r17
  bra            @exp
@exp_end:
  setgt.f64      p8, r38, r19
  mov.u64        r42, r18
@col:
  setge.u64      p3, r42, r4
  bra p3         @done
  mov.f64        r43, r19
  mov.u64        r21, r18
@acc:
  setge.u64      p4, r21, r3
  bra p4         @acc_end
  add.u64        r36, r14, r21
  ld.f64         r44, [%scores + r36*8]
  add.u64        r45, r15, r21
  mul.u64        r45, r45, r4
  add.u64        r45, r45, r42
  ld.$TY          r46, [%v + r45*$SZ]
  cvt.f64.$TY     r47, r46
  mul.f64        r48, r44, r47
  add.f64        r43, r43, r48
  add.u64        r21, r21, r17
  bra            @acc
@acc_end:
  div.f64        r49, r43, r38
  sel.f64        r49, p8, r49, r19
  cvt.$TY.f64     r50, r49
  add.u64        r51, r12, r42
  st.$TY          [%out + r51*$SZ], r50
  add.u64        r42, r42, r17
  bra            @col
@done:
  exit
)";

const char *kConv2d = R"(.kernel __hg_conv2d_$TY
.param %out : buffer<$TY> write
.param %in : buffer<$TY> read
.param %w : buffer<$TY> read
.param %bias : buffer<$TY> read
.param %total : u64
.param %C : u64
.param %H : u64
.param %W : u64
.param %K : u64
.param %KH : u64
.param %KW : u64
.param %stride : u64
.param %pad : u64
.param %OH : u64
.param %OW : u64
.param %flags : u32
  param.u64      r1, %total
  setge.u64      p0, %gid, r1
  bra p0         @done
  param.u64      r2, %C
  param.u64      r3, %H
  param.u64      r4, %W
  param.u64      r5, %K
  param.u64      r6, %KH
  param.u64      r7, %KW
  param.u64      r8, %stride
  param.u64      r9, %pad
  param.u64      r10, %OH
  param.u64      r11, %OW
  rem.u64        r12, %gid, r11
  div.u64        r13, %gid, r11
  rem.u64        r14, r13, r10
  div.u64        r13, r13, r10
  rem.u64        r15, r13, r5
  div.u64        r16, r13, r5
  mov.imm.f64    r17, 0.0
  param.u32      r18, %flags
  mov.imm.u32    r19, 0
  setne.u32      p1, r18, r19
  bra !p1        @no_bias
  ld.$TY          r20, [%bias + r15*$SZ]
  cvt.f64.$TY     r17, r20
@no_bias:
  mov.imm.u64    r21, 0
  mov.imm.u64    r22, 1
  mul.u64        r23, r14, r8
  mul.u64        r24, r12, r8
  mov.u64        r25, r21
@c:
  setge.u64      p2, r25, r2
  bra p2         @store
  mov.u64        r26, r21
@ky:
  setge.u64      p3, r26, r6
  bra p3         @ky_end
  add.u64        r27, r23, r26
  setlt.u64      p4, r27, r9
  sub.u64        r28, r27, r9
  setge.u64      p5, r28, r3
  por            p4, p4, p5
  bra p4         @ky_next
  mov.u64        r29, r21
@kx:
  setge.u64      p6, r29, r7
  bra p6         @ky_next
  add.u64        r30, r24, r29
  setlt.u64      p7, r30, r9
  sub.u64        r31, r30, r9
  setge.u64      p8, r31, r4
  por            p7, p7, p8
  bra p7         @kx_next
  mul.u64        r32, r16, r2
  add.u64        r32, r32, r25
  mul.u64        r32, r32, r3
  add.u64        r32, r32, r28
  mul.u64        r32, r32, r4
  add.u64        r32, r32, r31
  mul.u64        r33, r15, r2
  add.u64        r33, r33, r25
  mul.u64        r33, r33, r6
  add.u64        r33, r33, r26
  mul.u64        r33, r33, r7
  add.u64        r33, r33, r29
  ld.$TY          r34, [%in + r32*$SZ]
  ld.$TY          r35, [%w + r33*$SZ]
  cvt.f64.$TY     r36, r34
  cvt.f64.$TY     r37, r35
  mul.f64        r38, r36, r37
  add.f64        r17, r17, r38
@kx_next:
  add.u64        r29, r29, r22
  bra            @kx
@ky_next:
  add.u64        r26, r26, r22
  bra            @ky
@ky_end:
  add.u64        r25, r25, r22
  bra            @c
@store:
  cvt.$TY.f64     r39, r17
  st.$TY          [%out + %gid*$SZ], r39
@done:
  exit
)";

const char *kAxpy = R"(.kernel __hg_axpy_$TY
.param %y : buffer<$TY> readwrite
.param %x : buffer<$TY> read
.param %n : u64
.param %alpha : $TY
  param.u64      r1, %n
  setge.u64      p0, %gid, r1
  bra p0         @done
  param.$TY       r2, %alpha
  ld.$TY          r3, [%x + %gid*$SZ]
  ld.$TY          r4, [%y + %gid*$SZ]
  fma.$TY         r5, r2, r3, r4
  st.$TY          [%y + %gid*$SZ], r5
@done:
  exit
)";

const char *kMap = R"(.kernel __hg_map_$OP_$TY
.param %y : buffer<$TY> write
.param %x : buffer<$TY> read
.param %n : u64
  param.u64      r1, %n
  setge.u64      p0, %gid, r1
  bra p0         @done
  ld.$TY          r2, [%x + %gid*$SZ]
$BODY
  st.$TY          [%y + %gid*$SZ], r3
@done:
  exit
)";

const char *kMap2 = R"(.kernel __hg_map2_$OP_$TY
.param %y : buffer<$TY> write
.param %a : buffer<$TY> read
.param %b : buffer<$TY> read
.param %n : u64
  param.u64      r1, %n
  setge.u64      p0, %gid, r1
  bra p0         @done
  ld.$TY          r2, [%a + %gid*$SZ]
  ld.$TY          r4, [%b + %gid*$SZ]
$BODY
  st.$TY          [%y + %gid*$SZ], r3
@done:
  exit
)";

/// One stage of a reduction: each block folds a grid-stride share of %x into %out[block].
const char *kReduce = R"(.kernel __hg_reduce_$OP_$TY
.param %out : buffer<$TY> write
.param %x : buffer<$TY> read
.param %n : u64
.shared $SHARED
  param.u64      r1, %n
$SETUP
  mov.imm.$TY     r10, $IDENTITY
  mov.u64        r11, %gid
@loop:
  setge.u64      p1, r11, r1
  bra p1         @loop_end
  ld.$TY          r12, [%x + r11*$SZ]
  $OP.$TY         r10, r10, r12
  add.u64        r11, r11, %gsize
  bra            @loop
@loop_end:
$TREE
  mov.imm.u32    r20, 0
  setne.u32      p2, %lane.x, r20
  bra p2         @done
  cvt.u64.u32    r21, %block.x
  st.$TY          [%out + r21*$SZ], r15
@done:
  exit
)";

/// The first stage of dot: f64 partial sums of x·y per block.
const char *kDot = R"(.kernel __hg_dot_$TY
.param %out : buffer<f64> write
.param %x : buffer<$TY> read
.param %y : buffer<$TY> read
.param %n : u64
.shared 2048
  param.u64      r1, %n
$SETUP
  mov.imm.f64    r10, 0.0
  mov.u64        r11, %gid
@loop:
  setge.u64      p1, r11, r1
  bra p1         @loop_end
  ld.$TY          r12, [%x + r11*$SZ]
  ld.$TY          r13, [%y + r11*$SZ]
  cvt.f64.$TY     r14, r12
  cvt.f64.$TY     r16, r13
  mul.f64        r14, r14, r16
  add.f64        r10, r10, r14
  add.u64        r11, r11, %gsize
  bra            @loop
@loop_end:
$TREE
  mov.imm.u32    r20, 0
  setne.u32      p2, %lane.x, r20
  bra p2         @done
  cvt.u64.u32    r21, %block.x
  st.f64         [%out + r21*8], r15
@done:
  exit
)";

// ---------------------------------------------------------------------------------------------
// Instantiation

bool is_float_type(Type t) {
  return t == Type::F32 || t == Type::F64;
}

/// The reduction's identity, as ISA literal text.
std::string identity(ReduceOp op, Type t) {
  auto ints = [&](auto tag) -> std::string {
    using I = decltype(tag);
    switch (op) {
    case ReduceOp::Add: return "0";
    case ReduceOp::Mul: return "1";
    case ReduceOp::Min: return std::to_string(std::numeric_limits<I>::max());
    case ReduceOp::Max: return std::to_string(std::numeric_limits<I>::lowest());
    }
    return "0";
  };
  switch (t) {
  case Type::F32:
  case Type::F64:
    return op == ReduceOp::Add   ? "0.0"
           : op == ReduceOp::Mul ? "1.0"
           : op == ReduceOp::Min ? "inf"
                                 : "-inf";
  case Type::I8: return ints(int8_t{});
  case Type::U8: return ints(uint8_t{});
  case Type::I16: return ints(int16_t{});
  case Type::U16: return ints(uint16_t{});
  case Type::I32: return ints(int32_t{});
  case Type::U32: return ints(uint32_t{});
  case Type::I64: return ints(int64_t{});
  case Type::BF16:
  case Type::F16:
  case Type::None:
  case Type::Pred:
  case Type::U64: return ints(uint64_t{});
  }
  unreachable_enum("Type");
}

/// The instruction lines computing r3 from r2 (map) or from r2 and r4 (map2).
std::string map_body(const Instruction &inst) {
  std::string t(type_name(inst.type));
  auto line = [&](const std::string &m, const std::string &ops) {
    std::string mn = m + "." + t;
    mn.resize(std::max<size_t>(mn.size() + 1, 15), ' ');
    return "  " + mn + ops + "\n";
  };
  if (inst.op == Opcode::Map2) {
    auto op = static_cast<MapBinaryOp>(inst.sub);
    if (!is_float_type(inst.type) && (op == MapBinaryOp::Pow || op == MapBinaryOp::Atan2))
      return line("mov", "r3, r2"); // the reference leaves integers as they are
    return line(std::string(sub_name(SubKind::MapBinary, inst.sub)), "r3, r2, r4");
  }
  auto op = static_cast<MapUnaryOp>(inst.sub);
  std::string name(sub_name(SubKind::MapUnary, inst.sub));
  if (op == MapUnaryOp::Relu) {
    // x > 0 ? x : 0, and NaN stays NaN.
    std::string zero = is_float_type(inst.type) ? "0.0" : "0";
    std::string s = line("mov.imm", "r5, " + zero) + line("setgt", "p1, r2, r5");
    if (is_float_type(inst.type))
      s += line("setneu", "p2, r2, r2") + "  por            p1, p1, p2\n";
    return s + line("sel", "r3, p1, r2, r5");
  }
  if (!is_float_type(inst.type) && op != MapUnaryOp::Abs && op != MapUnaryOp::Neg)
    return line("mov", "r3, r2");
  return line(name, "r3, r2");
}

std::string kernel_text(const char *tmpl, Type t) {
  std::string s = replace_all(tmpl, "$TY", std::string(type_name(t)));
  return replace_all(s, "$SZ", std::to_string(type_size(t)));
}

std::string with_trees(std::string s, unsigned size, const std::string &type) {
  s = replace_all(s, "$SETUP", tree_setup(size));
  s = replace_all(s, "$TREE_MAX", tree("tmax", "max", type, "r10", "r15"));
  s = replace_all(s, "$TREE_SUM", tree("tsum", "add", type, "r20", "r21"));
  s = replace_all(s, "$TREE_MEAN", tree("tmean", "add", type, "r10", "r15"));
  return replace_all(s, "$TREE_SQ", tree("tsq", "add", type, "r20", "r21"));
}

/// The name and text of the kernel(s) an instruction launches.
struct Needed {
  std::string name, text;
};

void needed(const Instruction &inst, std::vector<Needed> &out) {
  Type t = inst.type;
  std::string tn(type_name(t));
  auto add = [&](const std::string &name, std::string text) {
    out.push_back({name, std::move(text)});
  };
  auto reduce = [&](ReduceOp op, Type rt) {
    std::string rn(type_name(rt));
    std::string opn(reduce_op_name(op));
    std::string s = kernel_text(kReduce, rt);
    s = replace_all(s, "$OP", opn);
    s = replace_all(s, "$IDENTITY", identity(op, rt));
    s = replace_all(s, "$SHARED", std::to_string(kRowBlock * type_size(rt)));
    s = replace_all(s, "$SETUP", tree_setup(type_size(rt)));
    s = replace_all(s, "$TREE", tree("tr", opn, rn, "r10", "r15"));
    add(std::string(kPrefix) + "reduce_" + opn + "_" + rn, s);
  };
  switch (as_launch(inst.op)) {
  case LaunchOpcode::Map:
  case LaunchOpcode::Map2: {
    bool two = inst.op == Opcode::Map2;
    std::string opn(sub_name(two ? SubKind::MapBinary : SubKind::MapUnary, inst.sub));
    std::string s = replace_all(kernel_text(two ? kMap2 : kMap, t), "$OP", opn);
    add(std::string(kPrefix) + (two ? "map2_" : "map_") + opn + "_" + tn,
        replace_all(s, "$BODY", map_body(inst)));
    return;
  }
  case LaunchOpcode::ReduceAll: reduce(static_cast<ReduceOp>(inst.sub), t); return;
  case LaunchOpcode::Dot:
    add(std::string(kPrefix) + "dot_" + tn,
        replace_all(replace_all(kernel_text(kDot, t), "$SETUP", tree_setup(8)), "$TREE",
                    tree("tr", "add", "f64", "r10", "r15")));
    reduce(ReduceOp::Add, Type::F64);
    return;
  case LaunchOpcode::Gemm:
  case LaunchOpcode::BatchedGemm:
    add(std::string(kPrefix) + "gemm_" + tn, kernel_text(kGemm, t));
    return;
  case LaunchOpcode::Gemv: add(std::string(kPrefix) + "gemv_" + tn, kernel_text(kGemv, t)); return;
  case LaunchOpcode::Softmax:
  case LaunchOpcode::LogSoftmax:
    add(std::string(kPrefix) + "softmax_" + tn, with_trees(kernel_text(kSoftmax, t), 8, "f64"));
    return;
  case LaunchOpcode::LayerNorm:
  case LaunchOpcode::RmsNorm:
    add(std::string(kPrefix) + "norm_" + tn, with_trees(kernel_text(kNorm, t), 8, "f64"));
    return;
  case LaunchOpcode::Silu:
  case LaunchOpcode::Gelu:
  case LaunchOpcode::GeluTanh:
    add(std::string(kPrefix) + "act_" + tn, kernel_text(kAct, t));
    return;
  case LaunchOpcode::Rope: add(std::string(kPrefix) + "rope_" + tn, kernel_text(kRope, t)); return;
  case LaunchOpcode::Attention:
    add(std::string(kPrefix) + "attention_" + tn, kernel_text(kAttention, t));
    return;
  case LaunchOpcode::Conv2d:
    add(std::string(kPrefix) + "conv2d_" + tn, kernel_text(kConv2d, t));
    return;
  case LaunchOpcode::Axpy: add(std::string(kPrefix) + "axpy_" + tn, kernel_text(kAxpy, t)); return;
  }
}

/// Parsed and verified library kernels by name (the texts are ours: a failure is a bug).
const Kernel &parse_library_kernel(const std::string &name, const std::string &text) {
  static std::mutex mutex;
  static std::map<std::string, Kernel> cache;
  std::lock_guard lock(mutex);
  auto it = cache.find(name);
  if (it != cache.end()) return it->second;
  DiagnosticEngine diags;
  auto m = parse_module(text, "<spirv library " + name + ">", diags);
  if (!m || !verify_module(*m, diags) || m->kernels.size() != 1)
    throw std::logic_error("the SPIR-V library kernel " + name + " does not verify:\n" +
                           diags.to_string() + "\n" + text);
  return cache.emplace(name, m->kernels[0]).first->second;
}

std::string where(const Kernel &k, const Instruction &inst) {
  return "kernel '" + k.name + "', line " + std::to_string(inst.loc.line) + ":" +
         std::to_string(inst.loc.col);
}

} // namespace

Status spirv_library_kernels(const Kernel &k, std::vector<Kernel> &out) {
  std::set<std::string> seen;
  for (const auto &existing : out) seen.insert(existing.name);
  for (const auto &inst : k.insts) {
    const auto &info = inst.info();
    if (!info.launch_level()) {
      // The scalar part runs on the host, which reaches device memory only through the
      // whole-launch instructions.
      // ld/st through buffer parameters become copies from and to the device.
      bool param_access = (inst.op == Opcode::Ld || inst.op == Opcode::St) &&
                          inst.operands[inst.op == Opcode::Ld ? 1 : 0].addr.base == AddrBase::Param;
      if (!param_access && ((info.flags & (kFlagReadsMemory | kFlagWritesMemory)) != 0 ||
                            info.family == OpFamily::Pool || info.family == OpFamily::Atlas))
        return {ErrorCode::InvalidProgram,
                where(k, inst) + ": '" + std::string(info.mnemonic) +
                    "' in a whole-launch kernel is not supported by the SPIR-V back end (the "
                    "kernel's own code runs on the host, beside its library operations)"};
      continue;
    }
    if (inst.type == Type::F16 || inst.type == Type::BF16)
      return {ErrorCode::InvalidProgram,
              where(k, inst) + ": '" + std::string(info.mnemonic) + "' on a storage type"};
    std::vector<Needed> kernels;
    needed(inst, kernels);
    for (const auto &n : kernels) {
      if (!seen.insert(n.name).second) continue;
      out.push_back(parse_library_kernel(n.name, n.text));
    }
  }
  return Status::ok();
}

} // namespace hologram::codegen
