// The GPU's f32 NaNs (see jit.h, canonicalize_f32_nans): an f32 arithmetic
// result that is NaN is 0x7fffffff there, whatever the operands; x86 passes
// an operand's payload on, and makes 0xffc00000 (negative) from invalid
// operations. A value's bits are seen only where they leave floating-point
// arithmetic: stored, reinterpreted as an integer, widened to f64 (printf),
// passed to a call or returned. So each f32 value is classed by where its
// NaNs can come from (arithmetic, or passed through from memory and
// arguments, which keep their payloads on the GPU too), and only values
// that reach such a place get the canonical NaN: there, when all of them
// come from arithmetic (one compare and one blend per store, not per
// operation); at each arithmetic definition, when a value mixes both.
//
// A thread's frame rows (kRowTag: registers saved at cuts, a collective's
// operands and results) carry values from one region to the next: a store
// to them is not a place where bits are seen, and a value read back from
// them counts as arithmetic's (a NaN crossing a barrier or a shuffle is far
// more often computed than moved; a moved one loses its payload there).
// Except where the reader gets the bits as an integer (kBitsSeenTag): an
// integer register holding an f32's bits that is read otherwise than as
// an f32, or a shuffle's value whose result is.
#include <llvm/ADT/DenseMap.h>
#include <llvm/Analysis/ValueTracking.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>

#include <set>
#include <vector>

#include "ptx/jit.h"
#include "ptx/lower.h"

namespace cucpu::ptx {
namespace {

// Where a value's NaNs may come from: none (it is never NaN), arithmetic,
// passed through, or both.
enum Source : uint8_t { kNever = 0, kArithmetic = 1, kPassed = 2, kBoth = 3 };

bool is_f32(const llvm::Value* v) { return v->getType()->isFloatTy(); }

// A frame-row access: tagged so, or (once the optimizer has rewritten it)
// an access to a warp machine's row slot, an alloca tagged so.
bool row_access(const llvm::Instruction* i) {
  if (!i) return false;
  if (i->getMetadata(kRowTag)) return true;
  const llvm::Value* p = llvm::getLoadStorePointerOperand(i);
  const auto* slot = p ? llvm::dyn_cast<llvm::AllocaInst>(llvm::getUnderlyingObject(p)) : nullptr;
  return slot && slot->getMetadata(kRowTag);
}

// A row store whose integer bits a reader may see (kBitsSeenTag on it, or
// on the warp machine's slot it goes to).
bool bits_seen(const llvm::StoreInst* st) {
  if (st->getMetadata(kBitsSeenTag)) return true;
  const auto* slot = llvm::dyn_cast<llvm::AllocaInst>(llvm::getUnderlyingObject(st->getPointerOperand()));
  return slot && slot->getMetadata(kBitsSeenTag);
}

// An integer read from a frame row, through width changes.
bool from_row(const llvm::Value* v) {
  for (int depth = 0; depth < 4; ++depth) {
    const auto* i = llvm::dyn_cast<llvm::Instruction>(v);
    if (!i) return false;
    if (llvm::isa<llvm::LoadInst>(i)) return row_access(i);
    if (!llvm::isa<llvm::CastInst>(i)) return false;
    v = i->getOperand(0);
  }
  return false;
}

// Every use of v stores it (through width changes and bit casts) into a frame row.
bool only_to_rows(const llvm::Value* v, int depth = 0) {
  if (depth > 4 || v->use_empty()) return false;
  for (const llvm::User* u : v->users()) {
    const auto* i = llvm::dyn_cast<llvm::Instruction>(u);
    if (const auto* st = llvm::dyn_cast_or_null<llvm::StoreInst>(i)) {
      if (st->getValueOperand() != v || !row_access(st) || bits_seen(st)) return false;
    } else if (!i || !llvm::isa<llvm::CastInst>(i) || !only_to_rows(i, depth + 1)) {
      return false;
    }
  }
  return true;
}

// An operation whose NaN result is the canonical NaN on the GPU.
bool arithmetic(const llvm::Instruction& i) {
  if (!is_f32(&i)) return false;
  if (llvm::isa<llvm::BinaryOperator>(i) || llvm::isa<llvm::FPTruncInst>(i)) return true;
  if (const auto* call = llvm::dyn_cast<llvm::CallInst>(&i)) {
    if (const auto* in = llvm::dyn_cast<llvm::IntrinsicInst>(call))
      return in->getIntrinsicID() != llvm::Intrinsic::fabs && in->getIntrinsicID() != llvm::Intrinsic::copysign &&
             in->getIntrinsicID() != llvm::Intrinsic::ssa_copy;
    return true;  // the runtime's helpers (directed rounding)
  }
  return false;
}

// An operation that hands an operand's bits on (the sign aside).
bool transparent(const llvm::Instruction& i) {
  if (llvm::isa<llvm::PHINode>(i) || llvm::isa<llvm::SelectInst>(i) || llvm::isa<llvm::UnaryOperator>(i)) return true;
  if (const auto* in = llvm::dyn_cast<llvm::IntrinsicInst>(&i))
    return in->getIntrinsicID() == llvm::Intrinsic::fabs || in->getIntrinsicID() == llvm::Intrinsic::copysign;
  return false;
}

// The operands of a transparent operation whose bits it may hand on.
std::vector<llvm::Value*> handed_on(llvm::Instruction& i) {
  if (auto* phi = llvm::dyn_cast<llvm::PHINode>(&i)) return {phi->incoming_values().begin(), phi->incoming_values().end()};
  if (auto* sel = llvm::dyn_cast<llvm::SelectInst>(&i)) return {sel->getTrueValue(), sel->getFalseValue()};
  return {i.getOperand(0)};
}

struct Classes {
  llvm::DenseMap<const llvm::Value*, uint8_t> of;

  uint8_t source(const llvm::Value* v) const {
    if (const auto* c = llvm::dyn_cast<llvm::ConstantFP>(v)) return c->isNaN() ? kPassed : kNever;
    if (llvm::isa<llvm::UndefValue>(v) || llvm::isa<llvm::Constant>(v)) return kNever;
    auto it = of.find(v);
    if (it != of.end()) return it->second;
    return llvm::isa<llvm::Instruction>(v) ? kNever : kPassed;  // arguments; instructions not yet seen
  }

  void classify(llvm::Function& fn) {
    for (bool changed = true; changed;) {
      changed = false;
      for (llvm::BasicBlock& bb : fn)
        for (llvm::Instruction& i : bb) {
          if (!is_f32(&i)) continue;
          uint8_t s = kPassed;  // loads, bit casts, element reads, other conversions
          if (arithmetic(i) || row_access(&i) || (llvm::isa<llvm::BitCastInst>(i) && from_row(i.getOperand(0)))) {
            s = kArithmetic;
          } else if (transparent(i)) {
            s = kNever;
            for (llvm::Value* v : handed_on(i)) s |= source(v);
          } else if (llvm::isa<llvm::SIToFPInst>(i) || llvm::isa<llvm::UIToFPInst>(i)) {
            s = kNever;
          }
          uint8_t& cur = of[&i];
          if ((cur | s) != cur) {
            cur |= s;
            changed = true;
          }
        }
    }
  }
};

// The operands of `i` whose bits leave floating-point arithmetic there.
std::vector<unsigned> seen_operands(const llvm::Instruction& i) {
  std::vector<unsigned> out;
  if (const auto* st = llvm::dyn_cast<llvm::StoreInst>(&i)) {
    if (is_f32(st->getValueOperand()) && (!row_access(st) || bits_seen(st))) out.push_back(0);
  } else if (llvm::isa<llvm::BitCastInst>(i)) {
    if (is_f32(i.getOperand(0)) && !only_to_rows(&i)) out.push_back(0);
  } else if (llvm::isa<llvm::FPExtInst>(i) || llvm::isa<llvm::ReturnInst>(i)) {
    if (i.getNumOperands() > 0 && is_f32(i.getOperand(0))) out.push_back(0);
  } else if (llvm::isa<llvm::InsertElementInst>(i)) {
    if (is_f32(i.getOperand(1))) out.push_back(1);
  } else if (const auto* call = llvm::dyn_cast<llvm::CallInst>(&i); call && !llvm::isa<llvm::IntrinsicInst>(call)) {
    for (unsigned k = 0; k < call->arg_size(); ++k)
      if (is_f32(call->getArgOperand(k))) out.push_back(k);
  }
  return out;
}

llvm::Value* canonical(llvm::IRBuilder<>& b, llvm::Value* v) {
  const llvm::APFloat nan(llvm::APFloat::IEEEsingle(), llvm::APInt(32, 0x7fffffffu));
  return b.CreateSelect(b.CreateFCmpUNO(v, v), llvm::ConstantFP::get(b.getContext(), nan), v, "nan.canonical");
}

}  // namespace

void canonicalize_f32_nans(llvm::Function& fn) {
  Classes classes;
  classes.classify(fn);
  std::vector<std::pair<llvm::Instruction*, unsigned>> at_use;
  std::vector<llvm::Value*> mixed;
  for (llvm::BasicBlock& bb : fn)
    for (llvm::Instruction& i : bb)
      for (unsigned k : seen_operands(i)) {
        const uint8_t s = classes.source(i.getOperand(k));
        if (s == kArithmetic) at_use.push_back({&i, k});
        if (s == kBoth) mixed.push_back(i.getOperand(k));
      }
  llvm::IRBuilder<> b(fn.getContext());
  for (auto [user, k] : at_use) {
    b.SetInsertPoint(user);
    user->setOperand(k, canonical(b, user->getOperand(k)));
  }
  // Mixed values: their arithmetic definitions, found back through the
  // operations that hand bits on, give the canonical NaN themselves.
  std::set<llvm::Value*> seen;
  std::vector<llvm::Instruction*> defs;
  while (!mixed.empty()) {
    llvm::Value* v = mixed.back();
    mixed.pop_back();
    auto* i = llvm::dyn_cast<llvm::Instruction>(v);
    if (!i || !seen.insert(v).second) continue;
    if (arithmetic(*i)) defs.push_back(i);
    else if (transparent(*i))
      for (llvm::Value* o : handed_on(*i)) mixed.push_back(o);
  }
  for (llvm::Instruction* d : defs) {
    b.SetInsertPoint(d->getNextNode());
    auto* sel = llvm::cast<llvm::Instruction>(canonical(b, d));
    d->replaceUsesWithIf(sel, [&](llvm::Use& u) {
      return u.getUser() != sel && u.getUser() != sel->getOperand(0);
    });
  }
}

}  // namespace cucpu::ptx
