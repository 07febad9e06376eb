// Texture and surface instructions: tex, tld4 and txq on texture objects,
// suld.b, sust.b and suq on surface objects (the unified, bindless forms
// nvcc emits). Each becomes a call of a service in texture.cpp, given the
// handle, an operation word, and the coordinates through a stack slot.
#include <algorithm>

#include "ptx/lower.h"
#include "devrt/texture.h"

namespace cucpu::ptx {

using llvm::Value;

namespace {

bool geometry_of(const std::string& m, TexGeometry* g) {
  static const std::pair<const char*, TexGeometry> kNames[] = {
      {"1d", TexGeometry::k1D},   {"2d", TexGeometry::k2D},     {"3d", TexGeometry::k3D},
      {"a1d", TexGeometry::kA1D}, {"a2d", TexGeometry::kA2D},   {"cube", TexGeometry::kCube},
      {"acube", TexGeometry::kACube}};
  for (const auto& [name, geom] : kNames)
    if (m == name) {
      *g = geom;
      return true;
    }
  return false;
}

bool query_of(const std::string& m, TexQuery* q) {
  static const std::pair<const char*, TexQuery> kNames[] = {
      {"width", TexQuery::kWidth},
      {"height", TexQuery::kHeight},
      {"depth", TexQuery::kDepth},
      {"channel_data_type", TexQuery::kChannelDataType},
      {"channel_order", TexQuery::kChannelOrder},
      {"normalized_coords", TexQuery::kNormalizedCoords},
      {"filter_mode", TexQuery::kFilterMode},
      {"addr_mode_0", TexQuery::kAddrMode0},
      {"addr_mode_1", TexQuery::kAddrMode1},
      {"addr_mode_2", TexQuery::kAddrMode2},
      {"array_size", TexQuery::kArraySize},
      {"num_mipmap_levels", TexQuery::kNumMipmapLevels},
      {"num_samples", TexQuery::kNumSamples}};
  for (const auto& [name, query] : kNames)
    if (m == name) {
      *q = query;
      return true;
    }
  return false;
}

}  // namespace

// The handle of a [object, {coordinates}] operand: a register holding a
// texture or surface object. Named .texref/.surfref variables (the
// pre-bindless references) are not supported.
Value* FnLowering::texture_handle(const Operand& o) {
  if (o.kind != Operand::Kind::kAddr || o.reg < 0 || o.imm != 0) unsupported();
  Operand r;
  r.kind = Operand::Kind::kReg;
  r.reg = o.reg;
  return read(r, Ty::kU64);
}

// A stack slot of `words` 32-bit words, in the entry block.
Value* FnLowering::word_slot(unsigned words) {
  llvm::IRBuilder<> eb(entry_block, entry_block->begin());
  return eb.CreateAlloca(llvm::ArrayType::get(b.getInt32Ty(), words), nullptr, "cucpu.tex");
}

// Stores the coordinate vector of `o` (its second part) into a slot of four words.
Value* FnLowering::texture_coords(const Operand& o) {
  if (o.elems.empty() || o.elems[0].kind != Operand::Kind::kVec || o.elems[0].elems.size() > 4) unsupported();
  Value* slot = word_slot(4);
  const auto& c = o.elems[0].elems;
  for (size_t i = 0; i < 4; ++i) {
    Value* v = i < c.size() && c[i].kind != Operand::Kind::kSink ? read(c[i], Ty::kB32) : b.getInt32(0);
    b.CreateStore(v, b.CreateConstInBoundsGEP2_32(llvm::ArrayType::get(b.getInt32Ty(), 4), slot, 0, static_cast<unsigned>(i)));
  }
  return slot;
}

bool FnLowering::lower_texture(const Instr& in) {
  const Op op = in.op;
  if (op != Op::kTex && op != Op::kTld4 && op != Op::kTxq && op != Op::kSuld && op != Op::kSust && op != Op::kSuq) return false;
  const auto& A = in.args;
  llvm::Type* ptr = llvm::PointerType::get(ctx, 0);
  llvm::Type* i32 = b.getInt32Ty();
  llvm::Type* i64 = b.getInt64Ty();
  auto* words4 = llvm::ArrayType::get(i32, 4);

  if (op == Op::kTxq || op == Op::kSuq) {  // txq.QUERY.b32 d, [object]
    TexQuery q;
    if (in.mods.size() != 2 || !query_of(in.mods[0], &q) || in.mods[1] != "b32" || A.size() != 2) unsupported();
    auto* ty = llvm::FunctionType::get(i32, {ptr, i64, i32, i32}, false);
    Value* r = b.CreateCall(runtime("cucpu_rt_txq", ty),
                            {env, texture_handle(A[1]), b.getInt32(static_cast<uint32_t>(q)), b.getInt32(op == Op::kSuq)});
    write(A[0], r, Ty::kB32);
    return true;
  }

  if (op == Op::kTex || op == Op::kTld4) {
    // tex.GEOM.v4.DTYPE.CTYPE d, [object, {c}]; tld4.COMP.2d.v4.DTYPE.f32.
    size_t k = 0;
    int8_t gather = -1;
    if (op == Op::kTld4) {
      static const char* kComps[] = {"r", "g", "b", "a"};
      for (int8_t c = 0; c < 4 && gather < 0 && k < in.mods.size(); ++c)
        if (in.mods[k] == kComps[c]) gather = c;
      if (gather < 0) unsupported();
      ++k;
    }
    TexGeometry g;
    if (in.mods.size() != k + 4 || !geometry_of(in.mods[k], &g) || in.mods[k + 1] != "v4") unsupported();
    const Ty dt = type_from_name(in.mods[k + 2]), ct = type_from_name(in.mods[k + 3]);
    if ((dt != Ty::kF32 && dt != Ty::kS32 && dt != Ty::kU32) || (ct != Ty::kF32 && ct != Ty::kS32)) unsupported();
    if (gather >= 0 && (g != TexGeometry::k2D || ct != Ty::kF32)) unsupported();
    // Operands: d, [object, {c}], and nothing else (offsets, depth
    // compares, predicates out are not supported).
    if (A.size() != 2 || A[0].kind != Operand::Kind::kVec || A[0].elems.size() != 4 || A[0].pair >= 0) unsupported();
    const TexValue tv = dt == Ty::kF32 ? TexValue::kF32 : dt == Ty::kS32 ? TexValue::kS32 : TexValue::kU32;
    const TexOp word{g, tv, ct == Ty::kS32, gather};
    Value* coords = texture_coords(A[1]);
    Value* out = word_slot(4);
    auto* ty = llvm::FunctionType::get(b.getVoidTy(), {ptr, i64, i32, ptr, ptr}, false);
    b.CreateCall(runtime("cucpu_rt_tex", ty), {env, texture_handle(A[1]), b.getInt32(word.pack()), coords, out});
    for (unsigned i = 0; i < 4; ++i) {
      const Operand& d = A[0].elems[i];
      if (d.kind == Operand::Kind::kSink) continue;
      Value* v = b.CreateLoad(i32, b.CreateConstInBoundsGEP2_32(words4, out, 0, i));
      write(d, dt == Ty::kF32 ? b.CreateBitCast(v, b.getFloatTy()) : v, dt);
    }
    return true;
  }

  // suld.b.GEOM{.v2,.v4}.bN.MODE d, [object, {c}]; sust.b... [object, {c}], v.
  if (in.mods.empty() || in.mods[0] != "b") unsupported();  // .p (formatted) stores are not supported
  size_t k = 1;
  TexGeometry g;
  if (k >= in.mods.size() || !geometry_of(in.mods[k++], &g) || g == TexGeometry::kCube || g == TexGeometry::kACube)
    unsupported();
  // Cache operators (.ca, .cg, .cs, .cv; .wb, .wt) change nothing here.
  static const char* kCacheOps[] = {"ca", "cg", "cs", "cv", "wb", "wt"};
  while (k < in.mods.size() && std::find_if(std::begin(kCacheOps), std::end(kCacheOps),
                                            [&](const char* c) { return in.mods[k] == c; }) != std::end(kCacheOps))
    ++k;
  unsigned vec = 1;
  if (k < in.mods.size() && (in.mods[k] == "v2" || in.mods[k] == "v4")) vec = in.mods[k++] == "v2" ? 2 : 4;
  if (k + 2 != in.mods.size()) unsupported();
  const Ty et = type_from_name(in.mods[k]);
  if (et != Ty::kB8 && et != Ty::kB16 && et != Ty::kB32 && et != Ty::kB64) unsupported();
  const std::string& mode = in.mods[k + 1];
  const SurfBoundary boundary = mode == "trap" ? SurfBoundary::kTrap : mode == "clamp" ? SurfBoundary::kClamp
                                : mode == "zero" ? SurfBoundary::kZero
                                                 : (unsupported(), SurfBoundary::kTrap);
  const unsigned eb = static_cast<unsigned>(type_bits(et) / 8);
  const SurfOp word{g, boundary, static_cast<uint8_t>(eb * vec)};
  if (A.size() != 2) fail(op_name(op) + " needs two operands");
  const Operand& addr = op == Op::kSuld ? A[1] : A[0];
  const Operand& val = op == Op::kSuld ? A[0] : A[1];
  std::vector<const Operand*> elems;
  if (val.kind == Operand::Kind::kVec) {
    for (const Operand& e : val.elems) elems.push_back(&e);
  } else {
    elems.push_back(&val);
  }
  if (elems.size() != vec) fail("the vector operand has the wrong number of elements");
  Value* coords = texture_coords(addr);
  Value* data = word_slot(8);  // up to 32 bytes
  llvm::Type* et_ll = llvm::Type::getIntNTy(ctx, eb * 8);
  auto elem_ptr = [&](unsigned i) { return b.CreateConstInBoundsGEP1_32(b.getInt8Ty(), data, i * eb); };
  auto* ty = llvm::FunctionType::get(b.getVoidTy(), {ptr, i64, i32, ptr, ptr}, false);
  if (op == Op::kSust) {
    for (unsigned i = 0; i < vec; ++i) b.CreateStore(read(*elems[i], et), elem_ptr(i));
    b.CreateCall(runtime("cucpu_rt_sust", ty), {env, texture_handle(addr), b.getInt32(word.pack()), coords, data});
    return true;
  }
  b.CreateCall(runtime("cucpu_rt_suld", ty), {env, texture_handle(addr), b.getInt32(word.pack()), coords, data});
  for (unsigned i = 0; i < vec; ++i)
    if (elems[i]->kind != Operand::Kind::kSink) write(*elems[i], b.CreateLoad(et_ll, elem_ptr(i)), et);
  return true;
}

}  // namespace cucpu::ptx
