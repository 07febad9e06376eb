// Function bodies: scopes, register declarations, labels, instructions and
// their operands (members of detail::Parser, parser_impl.h).
#include <algorithm>
#include <cstdlib>
#include <iterator>
#include <string_view>

#include "ptx/parser_impl.h"

namespace cucpu::ptx::detail {

void Parser::body(Function& f) {
  f_ = &f;
  reg_names_.clear();
  var_names_.clear();
  scopes_.clear();
  for (size_t i = 0; i < f.params.size(); ++i)
    if (f.params[i].space == Space::kReg) declare_reg(f.params[i].name, f.params[i].ty, 1);
  for (size_t i = 0; i < f.rets.size(); ++i)
    if (f.rets[i].space == Space::kReg) declare_reg(f.rets[i].name, f.rets[i].ty, 1);
  block(0);
  f_ = nullptr;
}

void Parser::declare_reg(const std::string& name, Ty ty, int vec) {
  RegDecl r{name, ty, vec};
  const int idx = static_cast<int>(f_->regs.size());
  f_->regs.push_back(r);
  auto it = reg_names_.find(name);
  const int prev = it == reg_names_.end() ? -1 : it->second;
  if (!scopes_.empty()) scopes_.back().regs.push_back({name, prev});
  reg_names_[name] = idx;
}

void Parser::block(int depth) {
  if (depth > kMaxNesting) fail(tok_, "blocks nested too deeply");
  expect('{');
  scopes_.emplace_back();
  while (!is_punct('}')) {
    if (tok_.kind == Tok::kEnd) fail(tok_, "unterminated function body");
    statement(depth);
  }
  advance();
  Scope s = std::move(scopes_.back());
  scopes_.pop_back();
  for (auto it = s.regs.rbegin(); it != s.regs.rend(); ++it) {
    if (it->second < 0) reg_names_.erase(it->first);
    else reg_names_[it->first] = it->second;
  }
  for (auto it = s.vars.rbegin(); it != s.vars.rend(); ++it) {
    if (it->second.empty()) var_names_.erase(it->first);
    else var_names_[it->first] = it->second;
  }
}

void Parser::statement(int depth) {
  if (is_punct('{')) return block(depth + 1);
  if (tok_.kind == Tok::kDirective) {
    const std::string_view d = tok_.text;
    if (d == ".reg") return reg_decl();
    if (d == ".local" || d == ".shared" || d == ".param" || d == ".const" || d == ".global") {
      VarDecl v = variable(false, false);
      if (v.space == Space::kGlobal || v.space == Space::kConst) fail(tok_, "function-scope .global/.const variables are not supported");
      // Body variables get unique names (call sequences redeclare param0 in each scope).
      std::string unique = v.name + "$" + std::to_string(f_->vars.size());
      auto it = var_names_.find(v.name);
      scopes_.back().vars.push_back({v.name, it == var_names_.end() ? std::string() : it->second});
      var_names_[v.name] = unique;
      v.name = unique;
      f_->vars.push_back(std::move(v));
      return;
    }
    if (d == ".loc" || d == ".file") return skip_line_directive();
    if (d == ".callprototype" || d == ".calltargets" || d == ".branchtargets") {
      // Labelled declarations for indirect calls and branches: calls need
      // no prototype here (every function has one calling convention).
      while (!is_punct(';') && tok_.kind != Tok::kEnd) advance();
      expect(';');
      return;
    }
    if (d == ".pragma") {
      while (!is_punct(';') && tok_.kind != Tok::kEnd) advance();
      expect(';');
      return;
    }
    fail(tok_, "unexpected directive '" + std::string(d) + "' in a function body");
  }
  if (tok_.kind == Tok::kWord) {
    // A label?
    const Tok t = tok_;
    std::string w(tok_.text);
    advance();
    if (is_punct(':')) {
      advance();
      if (f_->labels.count(w)) fail(t, "duplicate label '" + w + "'");
      f_->labels[w] = static_cast<int>(f_->body.size());
      return;
    }
    return instruction(t, w, -1, false);
  }
  if (is_punct('@')) {
    advance();
    bool neg = false;
    if (is_punct('!')) {
      neg = true;
      advance();
    }
    const Tok pt = tok_;
    const int p = reg_ref(word(), pt);
    if (f_->regs[static_cast<size_t>(p)].ty != Ty::kPred) fail(pt, "a guard must be a predicate");
    const Tok t = tok_;
    return instruction(t, word(), p, neg);
  }
  fail(tok_, "expected an instruction, found '" + std::string(tok_.text) + "'");
}

void Parser::reg_decl() {
  advance();
  int vec = 1;
  if (is_dir(".v2") || is_dir(".v4")) {
    vec = tok_.text[2] - '0';
    advance();
  }
  const Ty ty = type_directive();
  for (;;) {
    const Tok t = tok_;
    std::string name = word();
    if (is_punct('<')) {
      advance();
      const uint64_t n = integer();
      if (n > 1000000) fail(t, "too many registers");
      expect('>');
      for (uint64_t i = 0; i < n; ++i) declare_reg(name + std::to_string(i), ty, vec);
    } else {
      declare_reg(name, ty, vec);
    }
    if (!is_punct(',')) break;
    advance();
  }
  expect(';');
}

int Parser::reg_ref(const std::string& name, const Tok& t) {
  auto it = reg_names_.find(name);
  if (it == reg_names_.end()) fail(t, "undeclared register '" + name + "'");
  return it->second;
}

std::string Parser::symbol_name(const std::string& w) {
  auto it = var_names_.find(w);
  return it == var_names_.end() ? w : it->second;
}

void Parser::instruction(const Tok& t, const std::string& w, int guard, bool neg) {
  Instr in;
  in.line = t.line;
  in.col = t.col;
  in.guard = guard;
  in.guard_neg = neg;
  size_t dot = w.find('.');
  // A name the ISA lacks is malformed PTX, refused here as ptxas refuses it
  // at load; one cucpu does not compile is refused when a kernel using it is.
  if (!op_from_name(std::string_view(w).substr(0, dot), &in.op)) fail(t, "unknown instruction '" + w.substr(0, dot) + "'");
  while (dot != std::string::npos) {
    const size_t next = w.find('.', dot + 1);
    in.mods.push_back(w.substr(dot + 1, next == std::string::npos ? std::string::npos : next - dot - 1));
    if (in.mods.back().empty()) fail(t, "empty instruction suffix");
    dot = next;
  }
  if (!is_punct(';'))
    for (;;) {
      in.args.push_back(operand(0));
      if (!is_punct(',')) break;
      advance();
    }
  expect(';');
  f_->body.push_back(std::move(in));
}

Operand Parser::operand(int depth) {
  if (depth > 4) fail(tok_, "operand nested too deeply");
  Operand o;
  const Tok t = tok_;
  if (is_punct('[')) {
    advance();
    o.kind = Operand::Kind::kAddr;
    if (tok_.kind == Tok::kWord) {
      std::string w = word();
      if (reg_names_.count(w)) o.reg = reg_ref(w, t);
      else o.sym = symbol_name(w);
    } else {
      o.imm = static_cast<int64_t>(integer());
    }
    while (is_punct('+') || is_punct('-')) {
      const bool minus = is_punct('-');
      advance();
      const uint64_t v = integer();
      // Offsets wrap as address arithmetic does (no signed overflow).
      o.imm = static_cast<int64_t>(static_cast<uint64_t>(o.imm) + (minus ? ~v + 1 : v));
    }
    // Texture and surface operands: [object, {coordinates}] or
    // [texture, sampler, {coordinates}]; the rest follow in elems.
    while (is_punct(',')) {
      advance();
      o.elems.push_back(operand(depth + 1));
    }
    expect(']');
    return o;
  }
  if (is_punct('{')) {
    advance();
    o.kind = Operand::Kind::kVec;
    for (;;) {
      o.elems.push_back(operand(depth + 1));
      if (!is_punct(',')) break;
      advance();
    }
    expect('}');
    return o;
  }
  if (is_punct('(')) {
    advance();
    o.kind = Operand::Kind::kList;
    if (!is_punct(')'))
      for (;;) {
        o.elems.push_back(operand(depth + 1));
        if (!is_punct(',')) break;
        advance();
      }
    expect(')');
    return o;
  }
  if (is_punct('!')) {
    advance();
    o = operand(depth + 1);
    if (o.kind != Operand::Kind::kReg) fail(t, "'!' applies to a predicate register");
    o.neg = true;
    return o;
  }
  if (tok_.kind == Tok::kFloat) {
    o.kind = Operand::Kind::kFloat;
    o.fbits = tok_.fbits;
    o.fwidth = tok_.fwidth;
    o.fvalue = tok_.fval;
    advance();
    return o;
  }
  if (tok_.kind == Tok::kInt || is_punct('-')) {
    if (is_punct('-')) {
      advance();
      if (tok_.kind == Tok::kFloat) {
        o = operand(depth + 1);
        if (o.fwidth == 0) o.fvalue = -o.fvalue;
        else o.fbits ^= o.fwidth == 32 ? 0x80000000ull : 0x8000000000000000ull;
        return o;
      }
      if (tok_.kind == Tok::kWord && !tok_.text.empty() && tok_.text[0] == '%') {
        o = operand(depth + 1);  // vmad's negated operands; elsewhere the lowering refuses it
        if (o.kind != Operand::Kind::kReg) fail(t, "a minus applies to registers and numbers only");
        o.neg = true;
        return o;
      }
      o.kind = Operand::Kind::kImm;
      o.imm = static_cast<int64_t>(~integer() + 1);  // two's complement: -2^63 stays itself
      return o;
    }
    o.kind = Operand::Kind::kImm;
    o.imm = static_cast<int64_t>(integer());
    return o;
  }
  if (tok_.kind == Tok::kWord) {
    std::string w = word();
    if (w == "_") {
      o.kind = Operand::Kind::kSink;
      if (is_punct('|')) {
        advance();
        const Tok pt = tok_;
        o.pair = reg_ref(word(), pt);
      }
      return o;
    }
    if (w[0] == '%' || reg_names_.count(w)) {
      auto it = reg_names_.find(w);
      if (it != reg_names_.end()) {
        o.kind = Operand::Kind::kReg;
        o.reg = it->second;
      } else if (!vector_element(w, o) && !video_selector(w, t, o)) {
        special(w, t, o);
      }
      if (is_punct('|')) {
        advance();
        const Tok pt = tok_;
        o.pair = reg_ref(word(), pt);
      }
      return o;
    }
    if (w == "WARP_SZ") {  // the ISA's predefined constant (nvcc's warpSize)
      o.kind = Operand::Kind::kImm;
      o.imm = 32;
      return o;
    }
    o.kind = Operand::Kind::kSym;
    o.sym = symbol_name(w);
    return o;
  }
  fail(t, "unexpected '" + std::string(t.text) + "' in an operand");
}

// %v.x (.y, .z, .w, or .r, .g, .b, .a) of a vector register %v.
bool Parser::vector_element(const std::string& w, Operand& o) {
  const size_t dot = w.rfind('.');
  if (dot == std::string::npos || dot + 2 != w.size()) return false;
  auto it = reg_names_.find(w.substr(0, dot));
  if (it == reg_names_.end()) return false;
  static constexpr std::string_view kNames = "xyzwrgba";
  const size_t at = kNames.find(w[dot + 1]);
  if (at == std::string_view::npos) return false;
  const int elem = static_cast<int>(at % 4);
  if (elem >= f_->regs[static_cast<size_t>(it->second)].vec) return false;
  o.kind = Operand::Kind::kReg;
  o.reg = it->second;
  o.elem = elem;
  return true;
}

// %r.b0 ... %r.b3, %r.h0, %r.h1: a scalar video instruction's selector.
bool Parser::video_selector(const std::string& w, const Tok& t, Operand& o) {
  const size_t dot = w.rfind('.');
  if (dot == std::string::npos) return false;
  auto it = reg_names_.find(w.substr(0, dot));
  if (it == reg_names_.end()) return false;
  const std::string s = w.substr(dot + 1);
  static const char* const kSel[] = {"b0", "b1", "b2", "b3", "h0", "h1"};
  for (int i = 0; i < 6; ++i)
    if (s == kSel[i]) {
      o.kind = Operand::Kind::kReg;
      o.reg = it->second;
      o.sel = i;
      return true;
    }
  if (s.size() > 2 && (s[0] == 'b' || s[0] == 'h') && s.find_first_not_of("01234567", 1) == std::string::npos)
    fail(t, "the SIMD video lane selector '." + s + "' is not supported");
  return false;
}

void Parser::special(const std::string& w, const Tok& t, Operand& o) {
  std::string base = w, comp;
  const size_t dot = w.find('.');
  if (dot != std::string::npos) {
    base = w.substr(0, dot);
    comp = w.substr(dot + 1);
  }
  bool has_comp = false;
  if (!special_register(base, &o.sreg, &has_comp)) fail(t, "undeclared register '" + w + "'");
  o.kind = Operand::Kind::kSpecial;
  if (o.sreg == SReg::kEnvReg) {
    o.comp = std::atoi(base.c_str() + 7);  // %envregN
    return;
  }
  if (o.sreg == SReg::kPm) return;
  if (has_comp) {
    if (comp == "x") o.comp = 0;
    else if (comp == "y") o.comp = 1;
    else if (comp == "z") o.comp = 2;
    else fail(t, "special register '" + w + "' needs .x, .y or .z");
  } else if (!comp.empty()) {
    fail(t, "unknown special register '" + w + "'");
  }
}

}  // namespace cucpu::ptx::detail
